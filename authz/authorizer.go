package authz

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

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
	// broker knows it): "" when it has none, QueueDoesNotExist when there is
	// no such queue (no policy either); any other error fails the call
	// with ServiceUnavailable.
	QueuePolicy func(ctx context.Context, queue string) (string, error)
	// QueuePolicyTTL is how long a queue's policy, once read, is used
	// without reading it again (0: read on every call). ForgetQueue drops
	// it at once: the server calls it on this node's every change of a
	// queue's attributes; other nodes see a change within the TTL.
	QueuePolicyTTL time.Duration
	// TopicPolicy returns the Policy attribute of a topic (by ARN), AWS's
	// default topic policy when it has none of its own; an ErrSNSNotFound
	// error when there is no such topic. nil: topics have no policy.
	TopicPolicy func(ctx context.Context, topicARN string) (string, error)
	// Clock tells the time of the policy cache; nil is the system clock.
	Clock  tidemq.Clock
	Audit  *audit.Log // nil: refusals are only logged
	Logger *slog.Logger
	cache  policyCache
	queues queuePolicies
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
// (written to the audit log), or ServiceUnavailable when the queue's
// policy could not be read (the call may be retried; nothing is decided).
func (a *Authorizer) Check(ctx context.Context, c Call) error {
	p, d, err := a.decide(ctx, c)
	if err != nil {
		return err
	}
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
	_, d, err := a.decide(ctx, c)
	return err == nil && d.Allowed
}

// CallerAccount is api/sqs.Config.CallerAccount and api/sns's: the
// account of the principal of an access key, "" for a key nobody has.
func (a *Authorizer) CallerAccount(accessKey string) string {
	if p, ok := a.Store.Directory().Principal(accessKey); ok {
		return p.Account
	}
	return ""
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
	d, err := a.decideFor(ctx, nil, policy.Principal{Service: SNSService}, c)
	if err != nil {
		return err // a Receiver fault: the delivery is retried, not dropped
	}
	if d.Allowed {
		return nil
	}
	a.Audit.Write(audit.Event{Kind: audit.KindDenied, Principal: SNSService, Action: c.Action, Resource: queueARN,
		Source: topicARN, Reason: d.Reason})
	return denied(SNSService+" (from "+topicARN+")", c.Action, queueARN, d.Reason)
}

// SNSService is the service principal SNS deliveries are decided for.
const SNSService = "sns.amazonaws.com"

func (a *Authorizer) decide(ctx context.Context, c Call) (*Principal, policy.Decision, error) {
	p, ok := a.Store.Directory().Principal(c.AccessKey)
	if !ok {
		return nil, policy.Decision{Reason: "the access key is not known (any more)"}, nil
	}
	d, err := a.decideFor(ctx, p.Policy, p.policyPrincipal(), c)
	return p, d, err
}

// decideFor decides c for a principal; the error is a server error (the
// resource's policy could not be read), never a refusal.
func (a *Authorizer) decideFor(ctx context.Context, identity *policy.Document, pp policy.Principal, c Call) (policy.Decision, error) {
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
	resource, broken, err := a.resourcePolicy(ctx, c.Resource)
	if err != nil {
		return policy.Decision{}, err
	}
	if broken != "" {
		if !ownerRepairs(pp, req) {
			return policy.Decision{Reason: broken}, nil
		}
		// The owning account is not locked out of its own resource by
		// a policy nobody can evaluate: decided as if it had none.
		d := policy.Decide(identity, nil, req)
		d.Reason += " (the resource's Policy cannot be evaluated and is left out for its own account)"
		return d, nil
	}
	return policy.Decide(identity, resource, req), nil
}

// repairActions are what the owning account may still do on a resource
// whose stored Policy cannot be evaluated: read and replace or remove the
// policy, or delete the resource.
var repairActions = map[string]bool{
	"sqs:GetQueueAttributes": true, "sqs:SetQueueAttributes": true, "sqs:RemovePermission": true, "sqs:DeleteQueue": true,
	"sns:GetTopicAttributes": true, "sns:SetTopicAttributes": true, "sns:RemovePermission": true, "sns:DeleteTopic": true,
}

// ownerRepairs reports whether a request on a resource whose Policy does
// not parse is decided without it: the resource account's root user for
// any action (it is allowed everything in its account on AWS, and must be
// able to fix what is broken), and the account's other principals for the
// repairActions under their identity policies. Everyone else (another
// account, a service such as SNS) is denied: a policy that cannot be read
// grants nothing.
func ownerRepairs(pp policy.Principal, req policy.Request) bool {
	if pp.Service != "" || pp.Account != req.ResourceAccount {
		return false
	}
	return pp.Root || repairActions[req.Action]
}

// resourcePolicy is the policy of the resource an ARN names: a queue's
// Policy attribute (read through the cache, queuecache.go), or a topic's
// (AWS's default topic policy while it has none of its own), if it is one
// of this server's (of any of its accounts) and has one. A stored policy
// that does not parse denies (loudly; broken says why): it cannot be what
// its owner meant to allow; only its own account may still repair it
// (ownerRepairs).
// Only a resource that does not exist has no policy besides one whose
// Policy is empty; a policy that cannot be read fails the call with
// ServiceUnavailable (retryable) instead of deciding it without the policy
// (which could deny what it allows, or allow what it denies).
func (a *Authorizer) resourcePolicy(ctx context.Context, arn string) (doc *policy.Document, broken string, err error) {
	var text, kind string
	switch {
	case strings.HasPrefix(arn, "arn:aws:sqs:"):
		if a.QueuePolicy == nil {
			return nil, "", nil
		}
		name, ok := tidemq.QueueNameOfARN(arn, a.Region, a.Account)
		if !ok {
			return nil, "", nil
		}
		kind = "queue"
		text, err = a.queues.get(ctx, a.clock(), a.QueuePolicyTTL, name, a.QueuePolicy)
		if tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
			return nil, "", nil // no policy; the call then fails as it would
		}
	case strings.HasPrefix(arn, "arn:aws:sns:"):
		t, ok := tidemq.ParseARN(arn)
		if a.TopicPolicy == nil || !ok || !tidemq.ValidAccount(t.Account) || t.Resource == "" || strings.ContainsAny(t.Resource, "*?:") {
			return nil, "", nil // a listing's "every topic", or no topic's ARN
		}
		kind = "topic"
		text, err = a.TopicPolicy(ctx, arn)
		if tidemq.HasCode(err, tidemq.ErrSNSNotFound) || tidemq.HasCode(err, tidemq.ErrSNSInvalidParameter) {
			return nil, "", nil // no such topic: the call fails as it would
		}
	default:
		return nil, "", nil
	}
	if err != nil {
		a.logger().Warn("authz: a "+kind+"'s Policy cannot be read; calls that need it fail until it can", kind, arn, "err", err)
		return nil, "", tidemq.Errorf(tidemq.ErrServiceUnavailable, "The %s's policy could not be read; try again.", kind)
	}
	if text == "" {
		return nil, "", nil
	}
	doc, err = a.cache.parse(text)
	if err != nil {
		a.logger().Warn("authz: a "+kind+"'s Policy does not parse; calls that need it are denied", kind, arn, "err", err)
		return nil, fmt.Sprintf("the %s's Policy cannot be evaluated: %v", kind, err), nil
	}
	return doc, "", nil
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
