package engine

import (
	"slices"
	"strings"
	"sync"
)

// attrSets shares the attribute maps of queues whose attributes are the
// same (most queues keep the defaults): a map of a dozen attributes is
// about 500 bytes, per queue. A queue's attrs are never changed in place
// (applyAttributes replaces them whole), so sharing is safe.
var attrSets = &attrInterner{sets: make(map[string]map[string]string)}

// maxAttrSets bounds what the interner keeps (sets of deleted queues are
// not forgotten); past it, maps are kept unshared.
const maxAttrSets = 1024

type attrInterner struct {
	mu   sync.Mutex
	sets map[string]map[string]string
}

// intern returns a map equal to attrs, shared with earlier equal ones.
func (in *attrInterner) intern(attrs map[string]string) map[string]string {
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
	if m, ok := in.sets[key]; ok {
		return m
	}
	if len(in.sets) < maxAttrSets {
		in.sets[key] = attrs
	}
	return attrs
}
