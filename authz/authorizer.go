package authz

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/audit"
	"github.com/tidemq/tidemq/policy"
)

// Authorizer decides calls against the Store's principals and the queues'
// policies, and writes every refusal to the audit log.
type Authorizer struct {
	Store *Store
	// Account and Region are the server's: its queues' account and home
	// region.
	Account, Region string
	// QueuePolicy returns the Policy attribute of a queue (its name as the
	// broker knows it); "" when it has none or does not exist.
	QueuePolicy func(ctx context.Context, queue string) (string, error)
	Audit       *audit.Log // nil: refusals are only logged
	Logger      *slog.Logger
	cache       policyCache
}

// Call is one thing to decide.
type Call struct {
	AccessKey string
	Action    string // "sqs:SendMessage", "tidemq:Redrive"...
	Resource  string // an ARN
	// Source is the caller's address (r.RemoteAddr); Secure tells TLS.
	Source string
	Secure bool
	// Context adds condition keys (lower case): aws:SourceArn for SNS.
	Context map[string]string
}

// CallOf is a Call from an HTTP request.
func CallOf(r *http.Request, accessKey, action, resource string) Call {
	return Call{AccessKey: accessKey, Action: action, Resource: resource, Source: r.RemoteAddr, Secure: r.TLS != nil}
}

// Authorize is api/sqs.Authorizer's and api/sns.Config's: Check of an
// action on a resource by the caller of r.
func (a *Authorizer) Authorize(r *http.Request, accessKey, action, resource string) error {
	return a.Check(r.Context(), CallOf(r, accessKey, action, resource))
}

// Allowed is api/sqs.Authorizer's: Permits of an action on a resource.
func (a *Authorizer) Allowed(r *http.Request, accessKey, action, resource string) bool {
	return a.Permits(r.Context(), CallOf(r, accessKey, action, resource))
}

// Check decides c: nil when allowed, else an AccessDenied *tidemq.Error
// (written to the audit log).
func (a *Authorizer) Check(ctx context.Context, c Call) error {
	p, d := a.decide(ctx, c)
	if d.Allowed {
		return nil
	}
	who := "unknown"
	if p != nil {
		who = p.ARN()
	}
	if d.Unsupported {
		a.logger().Warn("authz: denied by a condition tidemq cannot evaluate", "principal", who, "action", c.Action, "resource", c.Resource, "reason", d.Reason)
	}
	a.Audit.Write(audit.Event{Kind: audit.KindDenied, Principal: who, AccessKey: c.AccessKey, Action: c.Action,
		Resource: c.Resource, Source: c.Source, Reason: d.Reason})
	return denied(who, c.Action, c.Resource, d.Reason)
}

// Permits decides c without auditing a refusal: for listings filtered to
// what the caller may see.
func (a *Authorizer) Permits(ctx context.Context, c Call) bool {
	_, d := a.decide(ctx, c)
	return d.Allowed
}

// DeliveryCheck is sns.Options.DeliveryCheck: may the topic send into the
// queue? The queue's policy must allow the service principal
// sns.amazonaws.com sqs:SendMessage under the topic's aws:SourceArn.
// With credentials in an original form (no principals, so no policies
// written for them) every delivery is let through, as before --auth
// decided anything but signatures: an upgrade must not start dropping them.
func (a *Authorizer) DeliveryCheck(ctx context.Context, topicARN, queueARN string) error {
	if !a.Store.Directory().Policies {
		return nil
	}
	t, _ := tidemq.ParseARN(topicARN)
	c := Call{Action: "sqs:SendMessage", Resource: queueARN,
		Context: map[string]string{policy.KeySourceArn: topicARN, policy.KeySourceAccount: t.Account, policy.KeySourceOwner: t.Account}}
	d := a.decideFor(ctx, nil, policy.Principal{Service: SNSService}, c)
	if d.Allowed {
		return nil
	}
	a.Audit.Write(audit.Event{Kind: audit.KindDenied, Principal: SNSService, Action: c.Action, Resource: queueARN,
		Source: topicARN, Reason: d.Reason})
	return denied(SNSService+" (from "+topicARN+")", c.Action, queueARN, d.Reason)
}

// SNSService is the service principal SNS deliveries are decided for.
const SNSService = "sns.amazonaws.com"

func (a *Authorizer) decide(ctx context.Context, c Call) (*Principal, policy.Decision) {
	p, ok := a.Store.Directory().Principal(c.AccessKey)
	if !ok {
		return nil, policy.Decision{Reason: "the access key is not known (any more)"}
	}
	return p, a.decideFor(ctx, p.Policy, p.policyPrincipal(), c)
}

func (a *Authorizer) decideFor(ctx context.Context, identity *policy.Document, pp policy.Principal, c Call) policy.Decision {
	req := policy.Request{Principal: pp, Action: c.Action, Resource: c.Resource, ResourceAccount: a.Account,
		Context: map[string]string{}}
	if arn, ok := tidemq.ParseARN(c.Resource); ok {
		req.ResourceAccount = arn.Account
	}
	for k, v := range c.Context {
		req.Context[k] = v
	}
	if pp.Service == "" {
		req.Context[policy.KeyPrincipalArn] = pp.ARN
		req.Context[policy.KeyPrincipalAccount] = pp.Account
		req.Context[policy.KeyPrincipalType] = "User"
		if _, name, ok := strings.Cut(pp.ARN, ":user/"); ok {
			req.Context[policy.KeyUsername] = name
		}
	}
	if c.Source != "" {
		host := c.Source
		if h, _, err := net.SplitHostPort(c.Source); err == nil {
			host = h
		}
		if net.ParseIP(host) != nil {
			req.Context[policy.KeySourceIP] = host
		}
	}
	if pp.Service == "" {
		req.Context[policy.KeySecureTransport] = fmt.Sprint(c.Secure)
	}
	resource, err := a.resourcePolicy(ctx, c.Resource)
	if err != nil {
		return policy.Decision{Reason: err.Error()}
	}
	return policy.Decide(identity, resource, req)
}

// resourcePolicy is the policy of the queue an ARN names, if it is one of
// this server's queues and has one. A stored policy that does not parse
// denies (loudly): it cannot be what its owner meant to allow.
func (a *Authorizer) resourcePolicy(ctx context.Context, arn string) (*policy.Document, error) {
	if a.QueuePolicy == nil || !strings.HasPrefix(arn, "arn:aws:sqs:") {
		return nil, nil
	}
	name, ok := tidemq.QueueNameOfARN(arn, a.Region, a.Account)
	if !ok {
		return nil, nil
	}
	text, err := a.QueuePolicy(ctx, name)
	if err != nil || text == "" {
		return nil, nil // a queue that does not exist has no policy; the call then fails as it would
	}
	doc, err := a.cache.parse(text)
	if err != nil {
		a.logger().Warn("authz: a queue's Policy does not parse; calls that need it are denied", "queue", arn, "err", err)
		return nil, fmt.Errorf("the queue's Policy cannot be evaluated: %v", err)
	}
	return doc, nil
}

func (a *Authorizer) logger() *slog.Logger {
	if a.Logger == nil {
		return slog.Default()
	}
	return a.Logger
}

// denied is AWS's refusal, in IAM's wording.
func denied(who, action, resource, reason string) *tidemq.Error {
	return tidemq.Errorf(tidemq.ErrAccessDenied, "User: %s is not authorized to perform: %s on resource: %s %s",
		who, action, resource, reason)
}
