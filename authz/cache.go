package authz

import (
	"sync"

	"github.com/tidemq/tidemq/policy"
)

// policyCache keeps queue policies parsed, by their text: a queue's Policy
// is read on every call that touches the queue, and parsing JSON each time
// would cost more than the decision. Bounded: when full it is emptied
// (policies are few and change rarely; a flood of distinct texts only
// costs parsing again).
type policyCache struct {
	mu   sync.Mutex
	docs map[string]cached
}

type cached struct {
	doc *policy.Document
	err error
}

const maxCachedPolicies = 4096

func (c *policyCache) parse(text string) (*policy.Document, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.docs[text]; ok {
		return e.doc, e.err
	}
	if c.docs == nil || len(c.docs) >= maxCachedPolicies {
		c.docs = map[string]cached{}
	}
	doc, err := policy.Parse([]byte(text))
	c.docs[text] = cached{doc, err}
	return doc, err
}
