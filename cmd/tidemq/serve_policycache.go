package main

import (
	"context"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/authz"
)

// policyForgetting tells the authorizer's queue-policy cache of every
// change this node makes to a queue's attributes (authz.Authorizer's
// QueuePolicyTTL): a grant or its removal through this node is decided
// with the next call, whatever the TTL.
type policyForgetting struct {
	tidemq.Broker
	a      *authz.Authorizer
	region string
}

// Unwrap returns the wrapped broker (see summaryOf).
func (b *policyForgetting) Unwrap() tidemq.Broker { return b.Broker }

// forget drops the queue's cached policy once a change is made (or
// failed): a read that began before it is not kept (authz's epoch), one
// that begins after it reads the change. A queue named by URL is not worth
// resolving here: every queue is forgotten.
func (b *policyForgetting) forget(queue string) {
	if strings.Contains(queue, "://") {
		b.a.ForgetQueue("")
		return
	}
	b.a.ForgetQueue(tidemq.CanonicalQueueName(queue, b.region))
}

// SendToQueues passes through (see tidemq.QueuesSender).
func (b *policyForgetting) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	return tidemq.SendToQueues(ctx, b.Broker, ps)
}

func (b *policyForgetting) CreateQueue(ctx context.Context, p tidemq.CreateQueueParams) (*tidemq.QueueInfo, error) {
	defer b.forget(p.Name)
	return b.Broker.CreateQueue(ctx, p)
}

func (b *policyForgetting) DeleteQueue(ctx context.Context, p tidemq.DeleteQueueParams) error {
	defer b.forget(p.Queue)
	return b.Broker.DeleteQueue(ctx, p)
}

func (b *policyForgetting) SetQueueAttributes(ctx context.Context, p tidemq.SetQueueAttributesParams) error {
	defer b.forget(p.Queue)
	return b.Broker.SetQueueAttributes(ctx, p)
}

func (b *policyForgetting) AddPermission(ctx context.Context, p tidemq.AddPermissionParams) error {
	defer b.forget(p.Queue)
	return b.Broker.AddPermission(ctx, p)
}

func (b *policyForgetting) RemovePermission(ctx context.Context, p tidemq.RemovePermissionParams) error {
	defer b.forget(p.Queue)
	return b.Broker.RemovePermission(ctx, p)
}
