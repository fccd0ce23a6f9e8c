package filterpolicy

import (
	"encoding/json"
	"strings"
	"testing"
)

func mustCompile(t *testing.T, text string, d Dialect) *Policy {
	t.Helper()
	p, err := Compile(text, d)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return p
}

// TestNumbersToFiveDecimalPlaces: AWS documents numeric matching in filter
// policies as "five digits of accuracy after the decimal point"
// (docs.aws.amazon.com/sns/latest/dg/subscription-filter-policy-constraints.html).
// Numbers that agree to five decimal places are equal; numbers that differ
// in the fifth are not. The rule holds for exact values, "=" and ranges, in
// every dialect (SNS attributes, SNS body, Lambda).
func TestNumbersToFiveDecimalPlaces(t *testing.T) {
	cases := []struct {
		value float64
		equal bool
	}{
		{42.5, true},
		{42.500001, true},   // differs in the sixth place
		{42.500004, true},   // still rounds to 42.50000
		{42.49999999, true}, // rounds up to 42.50000
		{42.50001, false},   // differs in the fifth place
		{42.49999, false},
		{42, false},
	}
	for _, d := range []struct {
		name string
		d    Dialect
		wrap func(string) string
	}{
		{"sns-attributes", SNSAttributes, func(s string) string { return s }},
		{"sns-body", SNSBody, func(s string) string { return s }},
		{"lambda", Lambda, func(s string) string { return `{"body":` + s + `}` }},
	} {
		exactP := mustCompile(t, d.wrap(`{"n":[42.5]}`), d.d)
		eqP := mustCompile(t, d.wrap(`{"n":[{"numeric":["=",42.5]}]}`), d.d)
		ltP := mustCompile(t, d.wrap(`{"n":[{"numeric":["<",42.5]}]}`), d.d)
		for _, c := range cases {
			doc := map[string]any{"n": c.value}
			if d.d.Lambda {
				doc = map[string]any{"body": doc}
			}
			if got := exactP.Match(doc); got != c.equal {
				t.Errorf("%s: [42.5] on %v = %v, want %v", d.name, c.value, got, c.equal)
			}
			if got := eqP.Match(doc); got != c.equal {
				t.Errorf("%s: numeric = 42.5 on %v = %v, want %v", d.name, c.value, got, c.equal)
			}
			// A number equal to 42.5 to five places is not below it.
			if got, want := ltP.Match(doc), !c.equal && c.value < 42.5; got != want {
				t.Errorf("%s: numeric < 42.5 on %v = %v, want %v", d.name, c.value, got, want)
			}
		}
	}
}

// TestLambdaSubset: the Lambda dialect refuses what Lambda's event
// filtering does not accept here, and takes what SNS refuses for its own
// limits.
func TestLambdaSubset(t *testing.T) {
	for _, bad := range []string{
		`[]`, `{}`, `{"body":"x"}`, `{"body":{}}`, `{"a":[]}`,
		`{"body":{"a":[{"anything-but":["x"]}]}}`,
		`{"a":[{"suffix":"x"}]}`, `{"a":[{"equals-ignore-case":"x"}]}`,
		`{"a":[{"cidr":"10.0.0.0/8"}]}`, `{"a":[{"wildcard":"*x"}]}`,
		`{"$or":[{"a":["1"]},{"b":["1"]}]}`, `{"$x":["1"]}`,
		`{"a":[{"numeric":["!",1]}]}`, `{"a":[{"numeric":[">","1"]}]}`,
	} {
		if _, err := Compile(bad, Lambda); err == nil {
			t.Errorf("Lambda accepted %s", bad)
		}
	}
	for _, good := range []string{
		`{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}`, // SNS's five-key limit
		`{"a":[{"numeric":["<",5,">",0]}]}`,                             // SNS wants the lower bound first
		`{"a":[5e10]}`,                                                  // SNS's ±1e9
	} {
		if _, err := Compile(good, Lambda); err != nil {
			t.Errorf("Lambda refused %s: %v", good, err)
		}
		if _, err := Compile(good, SNSAttributes); err == nil {
			t.Errorf("SNS accepted %s", good)
		}
	}
	_, err := Compile(`{"body":{"a":[{"suffix":"x"}]}}`, Lambda)
	if err == nil || !strings.Contains(err.Error(), "body: a: ") || !strings.Contains(err.Error(), "supported: prefix, numeric, exists") {
		t.Errorf("error %v does not name the key path and the supported matchers", err)
	}
}

// TestNestedObjects: SNS's body scope looks into arrays of objects and lets
// exists:false match below a missing object; Lambda's nested objects match
// objects only; SNS's attribute scope refuses nesting.
func TestNestedObjects(t *testing.T) {
	cases := []struct {
		policy   string
		doc      map[string]any
		sns, lam bool
	}{
		{`{"a":{"b":["x"]}}`, map[string]any{"a": map[string]any{"b": "x"}}, true, true},
		{`{"a":{"b":["x"]}}`, map[string]any{"a": []any{map[string]any{"b": "y"}, map[string]any{"b": "x"}}}, true, false},
		{`{"a":{"b":[{"exists":false}]}}`, map[string]any{}, true, false},
		{`{"a.b":["x"]}`, map[string]any{"a": map[string]any{"b": "x"}}, true, false},
	}
	for _, c := range cases {
		if got := mustCompile(t, c.policy, SNSBody).Match(c.doc); got != c.sns {
			t.Errorf("SNS body %s on %v = %v, want %v", c.policy, c.doc, got, c.sns)
		}
		if got := mustCompile(t, c.policy, Lambda).Match(c.doc); got != c.lam {
			t.Errorf("Lambda %s on %v = %v, want %v", c.policy, c.doc, got, c.lam)
		}
	}
	if _, err := Compile(`{"a":{"b":["x"]}}`, SNSAttributes); err != ErrNestedAttributes {
		t.Errorf("nested in attribute scope: %v", err)
	}
}

// TestFilterPolicyNumberNotation: AWS's filter-policy documentation treats
// numbers as numbers, not as the text they are written in (numeric
// matching, from -1e9 to 1e9 to five decimal places): 300, 3e2, 300.0 and
// 3.0E+2 are one value, in the policy and in the message alike, for exact
// values, "=", ranges and anything-but, in every dialect. A string "300"
// is not the number 300.
func TestFilterPolicyNumberNotation(t *testing.T) {
	notations := []string{"300", "3e2", "300.0", "3.0E+2", "300.000001", "30000e-2"}
	for _, d := range []struct {
		name string
		d    Dialect
		wrap func(string) string
	}{
		{"sns-attributes", SNSAttributes, func(s string) string { return s }},
		{"sns-body", SNSBody, func(s string) string { return s }},
		{"lambda", Lambda, func(s string) string { return `{"body":` + s + `}` }},
	} {
		for _, pn := range notations {
			policies := map[string]bool{ // policy -> whether 300 matches it
				`{"n":[` + pn + `]}`:                                    true,
				`{"n":[{"numeric":["=",` + pn + `]}]}`:                  true,
				`{"n":[{"numeric":[">=",` + pn + `,"<=",` + pn + `]}]}`: true,
				`{"n":[{"numeric":["<",` + pn + `]}]}`:                  false,
				`{"n":[{"anything-but":[` + pn + `]}]}`:                 false,
			}
			for text, want := range policies {
				if d.d.Lambda && strings.Contains(text, "anything-but") {
					continue // not in Lambda's subset
				}
				p := mustCompile(t, d.wrap(text), d.d)
				for _, vn := range notations {
					doc := decode(t, d.wrap(`{"n":`+vn+`}`))
					if got := p.Match(doc); got != want {
						t.Errorf("%s: %s on n=%s: %v, want %v", d.name, text, vn, got, want)
					}
				}
				// A string holding the digits is not the number, except
				// to anything-but, which any other value passes.
				if got := p.Match(decode(t, d.wrap(`{"n":"300"}`))); got != strings.Contains(text, "anything-but") {
					t.Errorf("%s: %s on n=\"300\": %v", d.name, text, got)
				}
			}
		}
		// Past the fifth decimal place numbers differ: 300.00001 is not 300.
		p := mustCompile(t, d.wrap(`{"n":[3e2]}`), d.d)
		if p.Match(decode(t, d.wrap(`{"n":300.00001}`))) {
			t.Errorf("%s: [3e2] matched 300.00001", d.name)
		}
	}
}

// decode is a JSON document as the matcher receives it (numbers as float64).
func decode(t *testing.T, text string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return doc
}
