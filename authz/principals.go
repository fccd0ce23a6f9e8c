package authz

import (
	"github.com/tidemq/tidemq/api/sigv4"
	"github.com/tidemq/tidemq/policy"
)

// Principal is one identity of the credentials file.
type Principal struct {
	// Name is the principal's user name ("team-a"); a key of the original
	// file forms is named after itself.
	Name string
	// Account is its account id (the server's unless the file says).
	Account string
	// Root: the account's root user, allowed everything in its account
	// that no resource policy denies. Keys of the original file forms are.
	Root bool
	// Policy is its identity policy; nil allows nothing (but Root).
	Policy *policy.Document
}

// ARN is the principal's IAM ARN: arn:aws:iam::<account>:user/<name>, or
// arn:aws:iam::<account>:root for a root user.
func (p *Principal) ARN() string {
	if p.Root {
		return "arn:aws:iam::" + p.Account + ":root"
	}
	return "arn:aws:iam::" + p.Account + ":user/" + p.Name
}

// policyPrincipal is p as policy.Decide sees it.
func (p *Principal) policyPrincipal() policy.Principal {
	return policy.Principal{ARN: p.ARN(), Account: p.Account, Root: p.Root}
}

// Directory is one version of the credentials: the secrets the signatures
// are checked against and the principal of each access key. It does not
// change once built.
type Directory struct {
	Credentials sigv4.Credentials
	byKey       map[string]*Principal
	// Principals lists them in file order.
	Principals []*Principal
	// Policies: the file is in the principals form, whose owner writes
	// policies. Only then do queue policies decide SNS deliveries; the
	// original forms (AKID:SECRET lines, INI, --credentials) deliver as
	// they did before permissions existed.
	Policies bool
}

// Principal returns the principal of an access key.
func (d *Directory) Principal(accessKey string) (*Principal, bool) {
	p, ok := d.byKey[accessKey]
	return p, ok
}

// Keys returns the access keys of a principal (by name and account).
func (d *Directory) Keys(p *Principal) []string {
	var out []string
	for k, q := range d.byKey {
		if q == p {
			out = append(out, k)
		}
	}
	return out
}

// rootDirectory makes every key of creds a root user of account: the
// meaning of the credentials file's original forms.
func rootDirectory(creds sigv4.Credentials, account string) *Directory {
	d := &Directory{Credentials: creds, byKey: map[string]*Principal{}}
	for k := range creds {
		p := &Principal{Name: k, Account: account, Root: true}
		d.byKey[k] = p
		d.Principals = append(d.Principals, p)
	}
	return d
}
