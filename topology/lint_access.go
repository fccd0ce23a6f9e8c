package topology

import (
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/policy"
)

// Permissions is what the linter asks of a permissions file (serve
// --credentials-file; package authz answers it): decisions of IAM's
// evaluation, made offline against the policies a topology declares.
type Permissions interface {
	// HasPrincipal reports whether the file names the principal.
	HasPrincipal(name string) bool
	// Allowed decides whether the named principal may do action on the
	// resource whose policy is resourcePolicy ("" for none); why says
	// why not.
	Allowed(principal, action, resource, resourcePolicy string) (ok bool, why string)
	// DeliveryAllowed decides whether the topic may deliver into the
	// queue under the queue's policy.
	DeliveryAllowed(topicARN, queueARN, queuePolicy string) (ok bool, why string)
	// Who names the principals that may do action on the resource.
	Who(action, resource, resourcePolicy string) []string
}

// LintOptions add checks to Lint.
type LintOptions struct {
	// Permissions, when set, adds the rules about who may do what
	// (TQ019-TQ022); Region and AccountID make the topology's ARNs.
	Permissions       Permissions
	Region, AccountID string
}

// consumeActions are what a consumer needs on its queue: Lambda's event
// source mapping asks for the same three.
var consumeActions = []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}

func (l *linter) checkAccess(o LintOptions, dlqs map[string][]*Queue) {
	p := o.Permissions
	queueARN := func(name string) string {
		if strings.HasPrefix(name, "arn:") {
			return name
		}
		return tidemq.QueueARN(o.Region, o.AccountID, name)
	}
	policyOf := func(name string) string {
		if q := l.c.Queue(queueName(name)); q != nil {
			return q.Policy
		}
		return ""
	}
	for _, f := range l.c.Functions {
		if f.Principal == "" {
			continue
		}
		if !p.HasPrincipal(f.Principal) {
			l.add(&f.src, "principal", RuleTriggerAccess, SeverityError, "name a principal of the credentials file",
				"function %s runs as principal %q, which the credentials file does not name", f.Name, f.Principal)
			continue
		}
		for _, q := range f.Produces {
			if ok, why := p.Allowed(f.Principal, "sqs:SendMessage", queueARN(q), policyOf(q)); !ok {
				l.add(&f.src, "principal", RuleTriggerAccess, SeverityError, "allow sqs:SendMessage on the queue in the principal's policy (or in the queue's policy)",
					"function %s (principal %s) produces to queue %s but may not send to it: %s", f.Name, f.Principal, queueName(q), why)
			}
		}
	}
	for _, t := range l.c.Triggers {
		f := l.c.Function(t.Function)
		if f == nil || f.Principal == "" || !p.HasPrincipal(f.Principal) {
			continue
		}
		for _, action := range consumeActions {
			if ok, why := p.Allowed(f.Principal, action, queueARN(t.Queue), policyOf(t.Queue)); !ok {
				l.add(&t.src, "queue", RuleTriggerAccess, SeverityError,
					"allow sqs:ReceiveMessage, sqs:DeleteMessage and sqs:GetQueueAttributes on the queue in the principal's policy",
					"the event source of function %s (principal %s) cannot consume queue %s: %s", f.Name, f.Principal, queueName(t.Queue), why)
				break
			}
		}
	}
	for _, tp := range l.c.Topics {
		topicARN := "arn:aws:sns:" + o.Region + ":" + o.AccountID + ":" + tp.Name
		for _, s := range tp.Subscriptions {
			if s.Protocol != "sqs" {
				continue
			}
			if ok, why := p.DeliveryAllowed(topicARN, queueARN(s.Endpoint), policyOf(s.Endpoint)); !ok {
				l.add(&s.src, "endpoint", RuleSubscriptionPolicy, SeverityError,
					`give the queue a policy: {"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"<queue ARN>","Condition":{"ArnEquals":{"aws:SourceArn":"`+topicARN+`"}}}`,
					"topic %s cannot deliver into queue %s under --auth: %s", tp.Name, queueName(s.Endpoint), why)
			}
		}
	}
	for _, q := range l.c.Queues {
		l.checkResourcePolicy(&q.src, "queue", q.Name, q.Policy)
	}
	for _, tp := range l.c.Topics {
		l.checkResourcePolicy(&tp.src, "topic", tp.Name, tp.Policy)
	}
	for _, q := range l.c.Queues {
		if !isDLQ(q, dlqs[q.Name]) {
			continue
		}
		arn := queueARN(q.Name)
		if len(p.Who("sqs:StartMessageMoveTask", arn, q.Policy)) == 0 && len(p.Who("tidemq:Redrive", arn, q.Policy)) == 0 {
			l.add(&q.src, "name", RuleDLQRedrive, SeverityWarning,
				"allow sqs:StartMessageMoveTask or tidemq:Redrive on it to the team that owns it (or to an operator)",
				"no principal of the credentials file may redrive dead-letter queue %s: its messages can only expire", q.Name)
		}
	}
}

// checkResourcePolicy reports a queue's or topic's policy that the server
// could not evaluate: one that does not parse, or one with a condition
// tidemq does not support. Under --auth such a policy denies the calls it
// would decide (its own account may still repair it; package authz).
func (l *linter) checkResourcePolicy(s *src, kind, name, text string) {
	if text == "" {
		return
	}
	doc, err := policy.Parse([]byte(text))
	if err == nil {
		err = doc.Check()
	}
	if err != nil {
		l.add(s, "policy", RuleResourcePolicy, SeverityError,
			"fix the policy: IAM's JSON, with conditions on the keys and operators the README's Permissions section lists",
			"the policy of %s %s cannot be evaluated, so under --auth it denies every call it applies to: %v", kind, name, err)
	}
}
