package policy

import (
	"fmt"
	"strings"
)

// Principal is who makes a request.
type Principal struct {
	// ARN is an IAM principal's ARN ("arn:aws:iam::111122223333:user/alice");
	// "" for a service.
	ARN string
	// Account is the IAM principal's account id.
	Account string
	// Root marks the account's root user: allowed everything in its own
	// account unless a resource policy denies it explicitly, as on AWS.
	Root bool
	// Service is a service principal ("sns.amazonaws.com"); "" for an IAM
	// principal. A service has no identity policy.
	Service string
}

// Request is what is decided: who, what, on which resource.
type Request struct {
	Principal Principal
	Action    string // "sqs:SendMessage"
	Resource  string // the resource's ARN
	// ResourceAccount owns the resource: the same as the principal's
	// account or not decides how the two policies combine.
	ResourceAccount string
	// Context holds the condition keys' values, keys in lower case
	// (KeySourceArn...). A key absent from it is absent from the request.
	Context map[string]string
}

// Decision is the outcome of Decide.
type Decision struct {
	Allowed bool
	// Reason says why, for logs, the audit log and error messages:
	// "explicit deny in the resource-based policy (Sid DenyAll)", "no
	// identity-based policy allows the sqs:SendMessage action"...
	Reason string
	// Unsupported is set when the request was denied because a statement
	// that applies to it needs a condition tidemq cannot evaluate.
	Unsupported bool
}

// outcome is one policy's verdict on a request.
type outcome struct {
	allow bool // a statement allows, naming the principal (or anyone)
	// allowAccount: a statement allows the principal's whole account
	// ("123456789012", "arn:aws:iam::123456789012:root").
	allowAccount bool
	deny         *Statement
	unsupported  error
}

// Decide decides req under the principal's identity policy (nil: none) and
// the resource's policy (nil: none), as the package comment describes.
func Decide(identity, resource *Document, req Request) Decision {
	p := req.Principal
	var id, res outcome
	if p.Service == "" {
		id = identity.evaluate(req, false)
	}
	res = resource.evaluate(req, true)
	for _, o := range []struct {
		out  outcome
		kind string
	}{{id, "identity-based"}, {res, "resource-based"}} {
		if o.out.unsupported != nil {
			return Decision{Reason: fmt.Sprintf("the %s policy has a condition tidemq cannot evaluate, so it denies: %v", o.kind, o.out.unsupported), Unsupported: true}
		}
	}
	for _, o := range []struct {
		out  outcome
		kind string
	}{{id, "an identity-based"}, {res, "a resource-based"}} {
		if o.out.deny != nil {
			return Decision{Reason: fmt.Sprintf("with an explicit deny in %s policy%s", o.kind, sidSuffix(o.out.deny.Sid))}
		}
	}
	switch {
	case p.Service != "":
		if res.allow {
			return Decision{Allowed: true, Reason: "allowed by the resource-based policy"}
		}
		return Decision{Reason: fmt.Sprintf("because no resource-based policy allows the %s action", req.Action)}
	case p.Account == req.ResourceAccount:
		switch {
		case p.Root:
			return Decision{Allowed: true, Reason: "the account's root user"}
		case id.allow:
			return Decision{Allowed: true, Reason: "allowed by the identity-based policy"}
		case res.allow:
			return Decision{Allowed: true, Reason: "allowed by the resource-based policy"}
		}
		return Decision{Reason: fmt.Sprintf("because no identity-based policy allows the %s action", req.Action)}
	default: // across accounts: both must allow
		if !id.allow && !p.Root {
			return Decision{Reason: fmt.Sprintf("because no identity-based policy allows the %s action", req.Action)}
		}
		if !res.allow && !res.allowAccount {
			return Decision{Reason: fmt.Sprintf("because no resource-based policy allows the %s action", req.Action)}
		}
		return Decision{Allowed: true, Reason: "allowed by both the identity-based and the resource-based policy"}
	}
}

// evaluate is one policy's verdict; resourcePolicy says which kind doc is
// (a resource policy's statements must name the principal).
func (doc *Document) evaluate(req Request, resourcePolicy bool) outcome {
	var o outcome
	if doc == nil {
		return o
	}
	for i := range doc.Statements {
		s := &doc.Statements[i]
		specific, account := true, false
		if resourcePolicy {
			specific, account = s.Principal.matches(req.Principal)
			if !specific && !account {
				continue
			}
		}
		if !s.matchesAction(req.Action) || !s.matchesResource(req.Resource, resourcePolicy) {
			continue
		}
		holds := true
		for _, c := range s.Conditions {
			if err := c.supported(); err != nil {
				if o.unsupported == nil {
					o.unsupported = fmt.Errorf("statement %d%s: %v", i+1, sidSuffix(s.Sid), err)
				}
				holds = false
				break
			}
			if !c.holds(req.Context) {
				holds = false
				break
			}
		}
		if !holds {
			continue
		}
		if s.Effect == Deny {
			if o.deny == nil {
				o.deny = s
			}
			continue
		}
		if specific {
			o.allow = true
		} else {
			o.allowAccount = true
		}
	}
	return o
}

// matches reports whether a resource policy's Principal names p: specific
// when it names p itself (or anyone), account when it names only p's
// account. A statement without Principal names nobody.
func (ps *Principals) matches(p Principal) (specific, account bool) {
	if ps == nil {
		return false, false
	}
	if ps.Any {
		return true, false
	}
	if p.Service != "" {
		for _, s := range ps.Service {
			if strings.EqualFold(s, p.Service) {
				return true, false
			}
		}
	}
	for _, a := range ps.AWS {
		switch {
		case a == "*":
			return true, false
		case p.Service != "":
		case a == p.ARN:
			return true, false
		case a == p.Account || a == "arn:aws:iam::"+p.Account+":root":
			if p.Root {
				return true, false
			}
			account = true
		}
	}
	return false, account
}

func (s *Statement) matchesAction(action string) bool {
	if s.NotAction != nil {
		for _, a := range s.NotAction {
			if matchAction(a, action) {
				return false
			}
		}
		return true
	}
	for _, a := range s.Action {
		if matchAction(a, action) {
			return true
		}
	}
	return false
}

// matchesResource: a resource policy's statement without Resource is about
// the resource it is attached to; an identity policy's names nothing.
func (s *Statement) matchesResource(arn string, resourcePolicy bool) bool {
	switch {
	case s.NotResource != nil:
		for _, r := range s.NotResource {
			if matchARN(r, arn) {
				return false
			}
		}
		return true
	case s.Resource == nil:
		return resourcePolicy
	}
	for _, r := range s.Resource {
		if matchARN(r, arn) {
			return true
		}
	}
	return false
}
