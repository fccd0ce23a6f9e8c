package authz

import (
	"fmt"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/policy"
)

// Offline decides with a Directory and the policies given to it, without a
// server: 'tidemq lint --credentials-file' uses it (it is the linter's
// topology.Permissions).
type Offline struct {
	Dir     *Directory
	Account string // the server's account
}

func (o Offline) principal(name string) *Principal {
	for _, p := range o.Dir.Principals {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// HasPrincipal reports whether the file names the principal.
func (o Offline) HasPrincipal(name string) bool { return o.principal(name) != nil }

func parseResourcePolicy(text string) (*policy.Document, error) {
	if text == "" {
		return nil, nil
	}
	return policy.Parse([]byte(text))
}

func resourceAccount(arn, fallback string) string {
	if a, ok := tidemq.ParseARN(arn); ok && a.Account != "" {
		return a.Account
	}
	return fallback
}

// Allowed decides whether the named principal may do action on resource.
func (o Offline) Allowed(name, action, resource, resourcePolicy string) (bool, string) {
	p := o.principal(name)
	if p == nil {
		return false, fmt.Sprintf("no principal is named %q", name)
	}
	doc, err := parseResourcePolicy(resourcePolicy)
	if err != nil {
		return false, "the queue's policy does not parse: " + err.Error()
	}
	d := policy.Decide(p.Policy, doc, policy.Request{Principal: p.policyPrincipal(), Action: action, Resource: resource,
		ResourceAccount: resourceAccount(resource, o.Account), Context: principalContext(p)})
	return d.Allowed, reasonOf(d)
}

// DeliveryAllowed decides whether the topic may deliver into the queue:
// always with a credentials file in an original form, as the server
// decides (Authorizer.DeliveryCheck).
func (o Offline) DeliveryAllowed(topicARN, queueARN, queuePolicy string) (bool, string) {
	if o.Dir != nil && !o.Dir.Policies {
		return true, ""
	}
	doc, err := parseResourcePolicy(queuePolicy)
	if err != nil {
		return false, "the queue's policy does not parse: " + err.Error()
	}
	t, _ := tidemq.ParseARN(topicARN)
	d := policy.Decide(nil, doc, policy.Request{Principal: policy.Principal{Service: SNSService}, Action: "sqs:SendMessage",
		Resource: queueARN, ResourceAccount: resourceAccount(queueARN, o.Account),
		Context: map[string]string{policy.KeySourceArn: topicARN, policy.KeySourceAccount: t.Account, policy.KeySourceOwner: t.Account}})
	if queuePolicy == "" && !d.Allowed {
		return false, "the queue has no policy"
	}
	return d.Allowed, reasonOf(d)
}

// Who names the principals that may do action on resource.
func (o Offline) Who(action, resource, resourcePolicy string) []string {
	var out []string
	for _, p := range o.Dir.Principals {
		if ok, _ := o.Allowed(p.Name, action, resource, resourcePolicy); ok {
			out = append(out, p.Name)
		}
	}
	return out
}

// principalContext is the request context of a principal's own keys
// (condition keys about the request itself are absent offline).
func principalContext(p *Principal) map[string]string {
	ctx := map[string]string{policy.KeyPrincipalArn: p.ARN(), policy.KeyPrincipalAccount: p.Account, policy.KeyPrincipalType: "User"}
	if !p.Root {
		ctx[policy.KeyUsername] = p.Name
	}
	return ctx
}

func reasonOf(d policy.Decision) string {
	return strings.TrimPrefix(strings.TrimPrefix(d.Reason, "because "), "with ")
}
