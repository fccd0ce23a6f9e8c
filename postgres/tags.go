package postgres

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// TagQueue adds or overwrites tags.
func (b *Broker) TagQueue(ctx context.Context, p tidemq.TagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return b.updateQueue(ctx, p.Queue, func(q *queue) error {
		for k, v := range p.Tags {
			q.tags[k] = v
		}
		return nil
	})
}

// UntagQueue removes tags; unknown keys are ignored.
func (b *Broker) UntagQueue(ctx context.Context, p tidemq.UntagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return b.updateQueue(ctx, p.Queue, func(q *queue) error {
		for _, k := range p.TagKeys {
			delete(q.tags, k)
		}
		return nil
	})
}

// ListQueueTags returns the queue's tags.
func (b *Broker) ListQueueTags(ctx context.Context, p tidemq.ListQueueTagsParams) (map[string]string, error) {
	if err := b.refusal(); err != nil {
		return nil, err
	}
	q, err := b.getQueue(ctx, b.pool, p.Queue, false)
	if err != nil {
		return nil, err
	}
	return q.tags, nil
}

// updateQueue runs fn on a queue with its row locked and saves the queue
// if fn succeeds.
func (b *Broker) updateQueue(ctx context.Context, name string, fn func(q *queue) error) error {
	return b.inTx(ctx, func(tx pgx.Tx) error {
		q, err := b.getQueue(ctx, tx, name, true)
		if err != nil {
			return err
		}
		if err := fn(q); err != nil {
			return err
		}
		return q.save(ctx, tx)
	})
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
func (b *Broker) AddPermission(ctx context.Context, p tidemq.AddPermissionParams) error {
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
	return b.updateQueue(ctx, p.Queue, func(q *queue) error {
		doc, err := q.policy()
		if err != nil {
			return err
		}
		for _, s := range doc.Statement {
			if s.Sid == p.Label {
				return tidemq.InvalidParameter("Label", p.Label, "Already exists.")
			}
		}
		principal, _ := json.Marshal(map[string]any{"AWS": principals})
		var action any = actions
		if len(actions) == 1 {
			action = actions[0]
		}
		doc.Statement = append(doc.Statement, policyStatement{
			Sid: p.Label, Effect: "Allow", Principal: principal, Action: action, Resource: q.arn,
		})
		q.setPolicy(doc)
		return nil
	})
}

// RemovePermission removes the statement labelled p.Label.
func (b *Broker) RemovePermission(ctx context.Context, p tidemq.RemovePermissionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return b.updateQueue(ctx, p.Queue, func(q *queue) error {
		doc, err := q.policy()
		if err != nil {
			return err
		}
		for i, s := range doc.Statement {
			if s.Sid == p.Label {
				doc.Statement = append(doc.Statement[:i], doc.Statement[i+1:]...)
				q.setPolicy(doc)
				return nil
			}
		}
		return tidemq.InvalidParameter("Label", p.Label, "can't find label on existing policy.")
	})
}

func (q *queue) policy() (policyDocument, error) {
	doc := policyDocument{Version: "2012-10-17", ID: q.arn + "/SQSDefaultPolicy"}
	if s := q.attrs[tidemq.AttrPolicy]; s != "" {
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			return doc, tidemq.InvalidParameter("Policy", s, "The queue's policy cannot be edited with AddPermission/RemovePermission because it is not in the standard form.")
		}
	}
	return doc, nil
}

func (q *queue) setPolicy(doc policyDocument) {
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
}
