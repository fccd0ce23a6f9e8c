package authz

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/tidemq/tidemq/api/sigv4"
	"github.com/tidemq/tidemq/policy"
)

// The principals form of the credentials file:
//
//	principals:
//	  - name: team-a                # IAM user name: arn:aws:iam::<account>:user/team-a
//	    account: "000000000000"     # optional: the server's --account-id
//	    keys: ["AKIATEAMA:secret"]  # one or more AKID:SECRET
//	    policy:                     # its identity policy, IAM's JSON written as YAML (or JSON)
//	      Version: "2012-10-17"
//	      Statement:
//	        - Effect: Allow
//	          Action: "sqs:*"
//	          Resource: "arn:aws:sqs:*:000000000000:team-a-*"
//	  - name: ops
//	    root: true                  # the account's root user: no policy needed
//	    keys: ["AKIAOPS:secret"]

type fileForm struct {
	Principals []filePrincipal `yaml:"principals"`
}

type filePrincipal struct {
	Name    string   `yaml:"name"`
	Account string   `yaml:"account"`
	Root    bool     `yaml:"root"`
	Keys    []string `yaml:"keys"`
	Policy  any      `yaml:"policy"`
}

var (
	namePattern    = regexp.MustCompile(`^[A-Za-z0-9+=,.@_-]{1,64}$`)
	accountPattern = regexp.MustCompile(`^[0-9]{12}$`)
)

// IsPrincipalsFile reports whether data is in the principals form: its first
// line that is neither blank nor a '#' comment starts with "principals:".
func IsPrincipalsFile(data []byte) bool {
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		return strings.HasPrefix(l, "principals:")
	}
	return false
}

// LoadFile reads a credentials file in any of its forms; account is the
// server's account id, the account of every principal that names none.
func LoadFile(path, account string) (*Directory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !IsPrincipalsFile(data) {
		creds, err := sigv4.LoadCredentials(path)
		if err != nil {
			return nil, err
		}
		return rootDirectory(creds, account), nil
	}
	d, err := ParsePrincipals(data, account)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// ParsePrincipals reads the principals form. Every error names the
// principal it is about; none echoes a secret.
func ParsePrincipals(data []byte, account string) (*Directory, error) {
	var f fileForm
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("not a principals file: %v", yaml.FormatError(err, false, true))
	}
	if len(f.Principals) == 0 {
		return nil, fmt.Errorf("no principals: every client would be locked out")
	}
	d := &Directory{Credentials: sigv4.Credentials{}, byKey: map[string]*Principal{}, Policies: true}
	seen := map[string]bool{}
	for i, fp := range f.Principals {
		p, err := fp.principal(account)
		if err != nil {
			return nil, fmt.Errorf("principal %d (%s): %w", i+1, fp.Name, err)
		}
		if seen[p.ARN()] {
			return nil, fmt.Errorf("principal %d: %s is given twice", i+1, p.ARN())
		}
		seen[p.ARN()] = true
		if len(fp.Keys) == 0 {
			return nil, fmt.Errorf("principal %d (%s): no keys", i+1, fp.Name)
		}
		for j, k := range fp.Keys {
			id, secret, ok := strings.Cut(k, ":")
			id, secret = strings.TrimSpace(id), strings.TrimSpace(secret)
			if !ok || id == "" || secret == "" {
				return nil, fmt.Errorf("principal %d (%s): key %d is not AKID:SECRET", i+1, fp.Name, j+1)
			}
			if _, dup := d.byKey[id]; dup {
				return nil, fmt.Errorf("principal %d (%s): access key %s belongs to another principal too", i+1, fp.Name, id)
			}
			one, err := sigv4.ParseCredentialPairs(id + ":" + secret)
			if err != nil {
				return nil, fmt.Errorf("principal %d (%s): key %d: %v", i+1, fp.Name, j+1, err)
			}
			d.Credentials[id] = one[id]
			d.byKey[id] = p
		}
		d.Principals = append(d.Principals, p)
	}
	return d, nil
}

func (fp filePrincipal) principal(account string) (*Principal, error) {
	if !namePattern.MatchString(fp.Name) {
		return nil, fmt.Errorf("name must be 1 to 64 of A-Z a-z 0-9 +=,.@_-")
	}
	p := &Principal{Name: fp.Name, Account: account, Root: fp.Root}
	if fp.Account != "" {
		if !accountPattern.MatchString(fp.Account) {
			return nil, fmt.Errorf("account must be 12 digits (quote it in YAML), not %q", fp.Account)
		}
		p.Account = fp.Account
	}
	if fp.Policy == nil {
		return p, nil
	}
	raw, err := json.Marshal(fp.Policy)
	if err != nil {
		return nil, fmt.Errorf("policy: %v", err)
	}
	doc, err := policy.Parse(raw)
	if err != nil {
		return nil, err
	}
	for i, s := range doc.Statements {
		if s.Principal != nil {
			return nil, fmt.Errorf("policy statement %d: an identity policy has no Principal (it is the principal's own)", i+1)
		}
		if s.Resource == nil && s.NotResource == nil {
			return nil, fmt.Errorf("policy statement %d: an identity policy's statement needs Resource or NotResource", i+1)
		}
	}
	// Refused up front: a condition that would deny at every call is a
	// mistake better seen at start-up (and at each reload).
	if err := doc.Check(); err != nil {
		return nil, fmt.Errorf("policy: %v", err)
	}
	return p.withPolicy(doc), nil
}

func (p *Principal) withPolicy(doc *policy.Document) *Principal {
	p.Policy = doc
	return p
}
