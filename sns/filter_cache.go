package sns

import "sync"

// filterCache holds compiled filter policies by scope and text, so that a
// publish does not parse every subscription's policy (up to 256 KB of
// JSON each) again. A compiled policy is never modified, so one value
// serves every publish. The cache is emptied when it reaches
// maxCachedFilters: policies change rarely, and a rebuild costs one
// compile per subscription.
type filterCache struct {
	mu sync.Mutex
	m  map[filterKey]*FilterPolicy
}

type filterKey struct{ scope, policy string }

const maxCachedFilters = 4096

// compile returns the compiled policy, from the cache when it is there.
func (c *filterCache) compile(policy, scope string) (*FilterPolicy, error) {
	k := filterKey{scope, policy}
	c.mu.Lock()
	fp, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return fp, nil
	}
	fp, err := CompileFilterPolicy(policy, scope)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedFilters {
		c.m = make(map[filterKey]*FilterPolicy)
	}
	c.m[k] = fp
	c.mu.Unlock()
	return fp, nil
}
