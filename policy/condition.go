package policy

import (
	"fmt"
	"net/netip"
	"strings"
)

// SupportedKeys are the condition keys tidemq puts in a request's context
// (lower case: keys are matched without regard to case). A policy naming
// another key denies the requests it applies to.
var SupportedKeys = []string{
	KeySourceArn, KeySourceAccount, KeySourceOwner,
	KeyPrincipalArn, KeyPrincipalAccount, KeyPrincipalType,
	KeySourceIP, KeySecureTransport, KeyUsername,
}

// The supported condition keys.
const (
	KeySourceArn        = "aws:sourcearn"     // the topic an SNS delivery comes from
	KeySourceAccount    = "aws:sourceaccount" // that topic's account
	KeySourceOwner      = "aws:sourceowner"   // the same, the older key SNS policies use
	KeyPrincipalArn     = "aws:principalarn"
	KeyPrincipalAccount = "aws:principalaccount"
	KeyPrincipalType    = "aws:principaltype" // "User" or "AWSService"... tidemq: "User"
	KeySourceIP         = "aws:sourceip"
	KeySecureTransport  = "aws:securetransport" // "true" over TLS
	KeyUsername         = "aws:username"
)

var supportedKey = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range SupportedKeys {
		m[k] = true
	}
	return m
}()

// operator is one supported condition operator.
type operator struct {
	negated bool
	match   func(pattern, value string) bool
}

var operators = map[string]operator{
	"stringequals":              {match: func(p, v string) bool { return p == v }},
	"stringnotequals":           {negated: true, match: func(p, v string) bool { return p == v }},
	"stringequalsignorecase":    {match: strings.EqualFold},
	"stringnotequalsignorecase": {negated: true, match: strings.EqualFold},
	"stringlike":                {match: Like},
	"stringnotlike":             {negated: true, match: Like},
	"arnequals":                 {match: matchARN},
	"arnlike":                   {match: matchARN},
	"arnnotequals":              {negated: true, match: matchARN},
	"arnnotlike":                {negated: true, match: matchARN},
	"bool":                      {match: strings.EqualFold},
	"ipaddress":                 {match: inPrefix},
	"notipaddress":              {negated: true, match: inPrefix},
}

// inPrefix reports whether address value is in the CIDR block (or is the
// address) pattern.
func inPrefix(pattern, value string) bool {
	addr, err := netip.ParseAddr(value)
	if err != nil {
		return false
	}
	if p, err := netip.ParsePrefix(pattern); err == nil {
		return p.Contains(addr.Unmap())
	}
	a, err := netip.ParseAddr(pattern)
	return err == nil && a == addr.Unmap()
}

// Check reports the first condition of doc that tidemq cannot evaluate (an
// unknown operator, a set qualifier, an unknown key), as an error naming
// it; nil when every condition is supported. Loaders use it to refuse
// such a policy up front; evaluation denies on it regardless.
func (doc *Document) Check() error {
	for i, s := range doc.Statements {
		for _, c := range s.Conditions {
			if err := c.supported(); err != nil {
				return fmt.Errorf("statement %d%s: %v", i+1, sidSuffix(s.Sid), err)
			}
		}
	}
	return nil
}

func sidSuffix(sid string) string {
	if sid == "" {
		return ""
	}
	return " (" + sid + ")"
}

// supported is nil when c can be evaluated.
func (c Condition) supported() error {
	op := strings.ToLower(c.Operator)
	if strings.Contains(op, ":") {
		return fmt.Errorf("condition operator %s: set qualifiers (ForAnyValue:, ForAllValues:) are not supported", c.Operator)
	}
	op = strings.TrimSuffix(op, "ifexists")
	if _, ok := operators[op]; !ok && op != "null" {
		return fmt.Errorf("condition operator %s is not supported", c.Operator)
	}
	if !supportedKey[strings.ToLower(c.Key)] {
		return fmt.Errorf("condition key %s is not supported (tidemq knows %s)", c.Key, strings.Join(SupportedKeys, ", "))
	}
	return nil
}

// holds evaluates c against a request context (keys in lower case).
// Call it only on a supported condition.
func (c Condition) holds(ctx map[string]string) bool {
	op := strings.ToLower(c.Operator)
	value, present := ctx[strings.ToLower(c.Key)]
	if op == "null" {
		// Null: "true" asks that the key be absent, "false" present.
		for _, v := range c.Values {
			if strings.EqualFold(v, "true") != present {
				return true
			}
		}
		return false
	}
	base, ifExists := strings.CutSuffix(op, "ifexists")
	o := operators[base]
	if !present {
		// A missing key matches nothing: a positive operator fails, a
		// negated one holds; IfExists holds either way.
		return ifExists || o.negated
	}
	for _, p := range c.Values {
		if o.match(p, value) {
			return !o.negated
		}
	}
	return o.negated
}
