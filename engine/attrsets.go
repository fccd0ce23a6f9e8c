package engine

import (
	"slices"
	"strings"
	"sync"

	"github.com/tidemq/tidemq"
)

// attrSets shares the attribute maps of queues whose attributes are the
// same (most queues keep the defaults), and the settings parsed from them:
// a map of a dozen attributes is about 500 bytes, the settings 96, per
// queue. A queue's attrs and settings are never changed in place
// (applyAttributes replaces them whole), so sharing is safe.
var attrSets = &attrInterner{sets: make(map[string]attrSet)}

// maxAttrSets bounds what the interner keeps (sets of deleted queues are
// not forgotten); past it, maps are kept unshared.
const maxAttrSets = 1024

type attrInterner struct {
	mu   sync.Mutex
	sets map[string]attrSet
}

// attrSet is a set of attributes and the settings they give.
type attrSet struct {
	attrs    map[string]string
	settings *tidemq.QueueSettings
}

// intern returns a map equal to attrs and the settings parsed from it,
// both shared with earlier equal ones.
func (in *attrInterner) intern(attrs map[string]string) (map[string]string, *tidemq.QueueSettings) {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(attrs[k])
		b.WriteByte(0)
	}
	key := b.String()
	in.mu.Lock()
	defer in.mu.Unlock()
	if set, ok := in.sets[key]; ok {
		return set.attrs, set.settings
	}
	settings := tidemq.ParseQueueSettings(attrs)
	if len(in.sets) < maxAttrSets {
		in.sets[key] = attrSet{attrs, &settings}
	}
	return attrs, &settings
}
