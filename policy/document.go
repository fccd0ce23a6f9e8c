package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Effect is a statement's Effect.
type Effect string

// The two effects.
const (
	Allow Effect = "Allow"
	Deny  Effect = "Deny"
)

// Document is a parsed policy.
type Document struct {
	Version    string
	ID         string
	Statements []Statement
}

// Statement is one statement of a Document.
type Statement struct {
	Sid    string
	Effect Effect
	// Principal is nil in an identity policy (the principal is the one the
	// policy is attached to); in a resource policy it names who the
	// statement is about.
	Principal *Principals
	// Exactly one of Action and NotAction is set, and at most one of
	// Resource and NotResource (an identity policy needs one; a resource
	// policy may leave both out: the resource it is attached to).
	Action, NotAction     []string
	Resource, NotResource []string
	Conditions            []Condition
}

// Principals is a statement's Principal: "*" (anyone), or AWS principals
// (account ids, account root ARNs, user ARNs, "*") and service names.
type Principals struct {
	Any     bool
	AWS     []string
	Service []string
}

// Condition is one operator applied to one key: all of a statement's
// conditions must hold (AND); a condition holds when the request's value
// matches any of Values (OR), or, for a negated operator, none of them.
type Condition struct {
	Operator string // as written, e.g. "ArnLike", "StringEqualsIfExists"
	Key      string // as written, e.g. "aws:SourceArn"
	Values   []string
}

// rawDocument is a policy as JSON writes it.
type rawDocument struct {
	Version   string          `json:"Version"`
	ID        string          `json:"Id"`
	Statement json.RawMessage `json:"Statement"`
}

type rawStatement struct {
	Sid          string                                `json:"Sid"`
	Effect       string                                `json:"Effect"`
	Principal    json.RawMessage                       `json:"Principal"`
	NotPrincipal json.RawMessage                       `json:"NotPrincipal"`
	Action       json.RawMessage                       `json:"Action"`
	NotAction    json.RawMessage                       `json:"NotAction"`
	Resource     json.RawMessage                       `json:"Resource"`
	NotResource  json.RawMessage                       `json:"NotResource"`
	Condition    map[string]map[string]json.RawMessage `json:"Condition"`
}

// Parse reads a policy document. Its errors say what is wrong and where
// (statement index or Sid); they never echo more than the offending part.
// A statement's conditions are parsed but not judged here: an unsupported
// operator or key is found by Check, and denies at evaluation.
func Parse(data []byte) (*Document, error) {
	var raw rawDocument
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("policy: not a policy document: %v", err)
	}
	switch raw.Version {
	case "", "2012-10-17", "2008-10-17":
	default:
		return nil, fmt.Errorf("policy: Version must be 2012-10-17 or 2008-10-17, not %q", raw.Version)
	}
	var stmts []rawStatement
	if t := bytes.TrimSpace(raw.Statement); len(t) > 0 && t[0] == '{' {
		var one rawStatement
		if err := strictUnmarshal(t, &one); err != nil {
			return nil, fmt.Errorf("policy: Statement: %v", err)
		}
		stmts = []rawStatement{one}
	} else if len(t) > 0 {
		if err := strictUnmarshal(t, &stmts); err != nil {
			return nil, fmt.Errorf("policy: Statement: %v", err)
		}
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("policy: the document has no Statement")
	}
	doc := &Document{Version: raw.Version, ID: raw.ID}
	for i, rs := range stmts {
		s, err := rs.parse()
		if err != nil {
			where := fmt.Sprintf("statement %d", i+1)
			if rs.Sid != "" {
				where += fmt.Sprintf(" (%s)", rs.Sid)
			}
			return nil, fmt.Errorf("policy: %s: %v", where, err)
		}
		doc.Statements = append(doc.Statements, s)
	}
	return doc, nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (rs rawStatement) parse() (Statement, error) {
	s := Statement{Sid: rs.Sid}
	switch rs.Effect {
	case string(Allow), string(Deny):
		s.Effect = Effect(rs.Effect)
	default:
		return s, fmt.Errorf("Effect must be Allow or Deny, not %q", rs.Effect)
	}
	if len(rs.NotPrincipal) > 0 {
		return s, fmt.Errorf("NotPrincipal is not supported")
	}
	var err error
	if len(rs.Principal) > 0 {
		if s.Principal, err = parsePrincipal(rs.Principal); err != nil {
			return s, err
		}
	}
	if s.Action, err = stringList("Action", rs.Action); err != nil {
		return s, err
	}
	if s.NotAction, err = stringList("NotAction", rs.NotAction); err != nil {
		return s, err
	}
	if (s.Action == nil) == (s.NotAction == nil) {
		return s, fmt.Errorf("a statement needs exactly one of Action and NotAction")
	}
	for _, a := range append(append([]string(nil), s.Action...), s.NotAction...) {
		if a != "*" && !strings.Contains(a, ":") {
			return s, fmt.Errorf("action %q is not service:Action", a)
		}
	}
	if s.Resource, err = stringList("Resource", rs.Resource); err != nil {
		return s, err
	}
	if s.NotResource, err = stringList("NotResource", rs.NotResource); err != nil {
		return s, err
	}
	if s.Resource != nil && s.NotResource != nil {
		return s, fmt.Errorf("a statement may have Resource or NotResource, not both")
	}
	ops := make([]string, 0, len(rs.Condition))
	for op := range rs.Condition {
		ops = append(ops, op)
	}
	sort.Strings(ops) // a stable order for messages and tests
	for _, op := range ops {
		keys := make([]string, 0, len(rs.Condition[op]))
		for k := range rs.Condition[op] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			vals, err := conditionValues(rs.Condition[op][k])
			if err != nil {
				return s, fmt.Errorf("Condition %s %s: %v", op, k, err)
			}
			s.Conditions = append(s.Conditions, Condition{Operator: op, Key: k, Values: vals})
		}
	}
	return s, nil
}

// stringList reads a string or a list of strings; nil when absent.
func stringList(field string, raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%s must be a string or a list of strings", field)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s is an empty list", field)
	}
	return list, nil
}

// conditionValues reads a condition's value: a string, a boolean, a
// number, or a list of them, kept as strings (as AWS compares them).
func conditionValues(raw json.RawMessage) ([]string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	one := func(x any) (string, error) {
		switch x := x.(type) {
		case string:
			return x, nil
		case bool, float64:
			return fmt.Sprint(x), nil
		}
		return "", fmt.Errorf("values must be strings, booleans or numbers")
	}
	if list, ok := v.([]any); ok {
		out := make([]string, 0, len(list))
		for _, x := range list {
			s, err := one(x)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := one(v)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

func parsePrincipal(raw json.RawMessage) (*Principals, error) {
	var star string
	if err := json.Unmarshal(raw, &star); err == nil {
		if star != "*" {
			return nil, fmt.Errorf(`Principal must be "*" or an object such as {"AWS": ...}, not %q`, star)
		}
		return &Principals{Any: true}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf(`Principal must be "*" or an object such as {"AWS": ...}`)
	}
	p := &Principals{}
	for k, v := range m {
		list, err := stringList("Principal."+k, v)
		if err != nil {
			return nil, err
		}
		switch k {
		case "AWS":
			p.AWS = list
		case "Service":
			p.Service = list
		default:
			return nil, fmt.Errorf("Principal %q is not supported (AWS and Service are)", k)
		}
	}
	return p, nil
}
