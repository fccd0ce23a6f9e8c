package sqs

import (
	"net/http"
	"strings"

	"github.com/tidemq/tidemq"
)

// Authorizer decides whether the caller of a request may do an action (in
// IAM's naming: "sqs:SendMessage", "tidemq:PeekMessages") on a resource (an
// ARN). package authz implements it; without one (no --auth) every call
// is allowed and nothing is looked up.
type Authorizer interface {
	// Authorize returns nil, or the refusal to answer with (AccessDenied).
	Authorize(r *http.Request, accessKey, action, resource string) error
	// Allowed is Authorize for listings: a queue the caller may not see
	// is left out rather than refused, and nothing is audited.
	Allowed(r *http.Request, accessKey, action, resource string) bool
}

// iamActions are the IAM actions of the API actions whose names differ:
// a batch is authorized as its single action, as on AWS; the extensions
// are tidemq's.
var iamActions = map[string]string{
	"SendMessageBatch":                       "sqs:SendMessage",
	"DeleteMessageBatch":                     "sqs:DeleteMessage",
	"ChangeMessageVisibilityBatch":           "sqs:ChangeMessageVisibility",
	extensionTargetPrefix + "PeekMessages":   "tidemq:PeekMessages",
	extensionTargetPrefix + "ListQueueStats": "sqs:GetQueueAttributes",
}

// iamAction names an API action for the Authorizer.
func iamAction(action string) string {
	if a, ok := iamActions[action]; ok {
		return a
	}
	return "sqs:" + action
}

// queueARN is the ARN of a queue by its broker name.
func (c *call) queueARN(name string) string {
	return tidemq.RegionalQueueARN(c.h.cfg.Region, c.h.cfg.AccountID, name)
}

// authorize asks the Authorizer whether the request's action is allowed on
// the queue (by its broker name).
func (c *call) authorize(name string) error {
	return c.authorizeARN(iamAction(c.action), c.queueARN(name))
}

// authorizeARN asks about an action on a resource by its ARN.
func (c *call) authorizeARN(action, arn string) error {
	if c.h.cfg.Authorizer == nil || arn == "" || strings.HasSuffix(arn, ":") {
		return nil // nothing named: the broker refuses the request as such
	}
	return c.h.cfg.Authorizer.Authorize(c.r, c.accessKey, action, arn)
}

// visible filters queue names (broker names) to those the caller may do
// the request's action on.
func (c *call) visible(names []string) []string {
	if c.h.cfg.Authorizer == nil {
		return names
	}
	out := names[:0:0]
	for _, n := range names {
		if c.h.cfg.Authorizer.Allowed(c.r, c.accessKey, iamAction(c.action), c.queueARN(n)) {
			out = append(out, n)
		}
	}
	return out
}
