package engine

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tidemq/tidemq"
)

// TagQueue adds or overwrites tags; a queue holds at most
// tidemq.MaxTagsPerQueue.
func (e *Engine) TagQueue(ctx context.Context, p tidemq.TagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return e.updateQueue(p.Queue, func(q *queue) error {
		n := len(q.tags)
		for k := range p.Tags {
			if _, ok := q.tags[k]; !ok {
				n++
			}
		}
		if n > tidemq.MaxTagsPerQueue {
			return tidemq.TooManyTags(q.name)
		}
		for k, v := range p.Tags {
			q.tags[k] = v
		}
		return nil
	})
}

// UntagQueue removes tags; unknown keys are ignored.
func (e *Engine) UntagQueue(ctx context.Context, p tidemq.UntagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return e.updateQueue(p.Queue, func(q *queue) error {
		for _, k := range p.TagKeys {
			delete(q.tags, k)
		}
		return nil
	})
}

// ListQueueTags returns a copy of the queue's tags.
func (e *Engine) ListQueueTags(ctx context.Context, p tidemq.ListQueueTagsParams) (_ map[string]string, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return nil, err
	}
	// e.mu is released by the guard
	q, err := e.queue(p.Queue)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(q.tags))
	for k, v := range q.tags {
		out[k] = v
	}
	return out, nil
}

// updateQueue runs fn on a queue under the lock and stores the queue record
// if fn succeeds.
func (e *Engine) updateQueue(name string, fn func(q *queue) error) (err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return err
	}
	q, err := e.queue(name)
	if err == nil {
		err = fn(q)
	}
	if err != nil {
		h.unlock()
		return err
	}
	t := e.begin()
	t.b.Set(queueKey(q.name), q.record())
	return e.finish(&h, t)
}

// policyDocument is the queue policy that Add/RemovePermission edit.
type policyDocument struct {
	Version   string            `json:"Version"`
	ID        string            `json:"Id,omitempty"`
	Statement []policyStatement `json:"Statement"`
}

type policyStatement struct {
	Sid       string          `json:"Sid"`
	Effect    string          `json:"Effect"`
	Principal json.RawMessage `json:"Principal"`
	Action    any             `json:"Action"`
	Resource  string          `json:"Resource"`
}

// AddPermission adds a statement, labelled p.Label, to the queue's Policy.
func (e *Engine) AddPermission(ctx context.Context, p tidemq.AddPermissionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	principals := make([]string, len(p.AccountIDs))
	for i, id := range p.AccountIDs {
		principals[i] = "arn:aws:iam::" + id + ":root"
	}
	actions := make([]string, len(p.Actions))
	for i, a := range p.Actions {
		if !strings.HasPrefix(a, "SQS:") {
			a = "SQS:" + a
		}
		actions[i] = a
	}
	return e.updateQueue(p.Queue, func(q *queue) error {
		doc, err := q.policy()
		if err != nil {
			return err
		}
		for _, s := range doc.Statement {
			if s.Sid == p.Label {
				return tidemq.InvalidParameter("Label", p.Label, "Already exists.")
			}
		}
		// AWS's shape: one principal is a string, several a list (as
		// for the actions below).
		var aws any = principals
		if len(principals) == 1 {
			aws = principals[0]
		}
		principal, _ := json.Marshal(map[string]any{"AWS": aws})
		var action any = actions
		if len(actions) == 1 {
			action = actions[0]
		}
		doc.Statement = append(doc.Statement, policyStatement{
			Sid: p.Label, Effect: "Allow", Principal: principal, Action: action, Resource: q.arn,
		})
		return q.setPolicy(doc)
	})
}

// RemovePermission removes the statement labelled p.Label.
func (e *Engine) RemovePermission(ctx context.Context, p tidemq.RemovePermissionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return e.updateQueue(p.Queue, func(q *queue) error {
		doc, err := q.policy()
		if err != nil {
			return err
		}
		for i, s := range doc.Statement {
			if s.Sid == p.Label {
				doc.Statement = append(doc.Statement[:i], doc.Statement[i+1:]...)
				return q.setPolicy(doc)
			}
		}
		return tidemq.InvalidParameter("Label", p.Label, "can't find label on existing policy.")
	})
}

func (q *queue) policy() (policyDocument, error) {
	// The version AWS writes in the policy AddPermission creates.
	doc := policyDocument{Version: "2008-10-17", ID: q.arn + "/SQSDefaultPolicy"}
	if s := q.attrs[tidemq.AttrPolicy]; s != "" {
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			return doc, tidemq.InvalidParameter("Policy", s, "The queue's policy cannot be edited with AddPermission/RemovePermission because it is not in the standard form.")
		}
	}
	return doc, nil
}

func (q *queue) setPolicy(doc policyDocument) error {
	attrs := make(map[string]string, len(q.attrs))
	for k, v := range q.attrs {
		attrs[k] = v
	}
	if len(doc.Statement) == 0 {
		attrs[tidemq.AttrPolicy] = ""
	} else {
		b, _ := json.Marshal(doc)
		attrs[tidemq.AttrPolicy] = string(b)
	}
	q.applyAttributes(attrs)
	return nil
}
