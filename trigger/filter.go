package trigger

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Pattern is a compiled event filtering pattern: a small subset of
// EventBridge patterns, applied to the record as Lambda shows it
// ({"body": ..., "attributes": {...}, "messageAttributes": {...}}), with
// the body parsed when it is JSON and kept as a string otherwise.
//
// Supported: nested objects of field names; at a leaf, a list of matchers
// of which one must match (a field holding a list matches when one of its
// elements does). A matcher is
//
//   - a literal string, number, true, false or null: equality;
//   - {"prefix": "text"}: a string starting with text;
//   - {"numeric": [">", 0, "<=", 5]}: a number meeting every comparison
//     (=, <, <=, >, >=);
//   - {"exists": true|false}: whether the field is there.
//
// Every field of a pattern must match. Not supported (refused):
// anything-but, suffix, equals-ignore-case, wildcard, cidr and $or.
type Pattern struct {
	fields map[string]*patternNode
}

type patternNode struct {
	sub      *Pattern  // a nested object
	matchers []matcher // a leaf
}

type matcher struct {
	kind    string // "literal", "prefix", "numeric", "exists"
	literal any
	prefix  string
	numeric []numericCmp
	exists  bool
}

type numericCmp struct {
	op string
	n  float64
}

// ParsePattern compiles a pattern from its JSON text.
func ParsePattern(s string) (*Pattern, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("pattern is not a JSON object: %v", err)
	}
	return compile(v)
}

func compile(obj map[string]any) (*Pattern, error) {
	if len(obj) == 0 {
		return nil, errors.New("empty pattern object")
	}
	p := &Pattern{fields: make(map[string]*patternNode, len(obj))}
	for k, v := range obj {
		if strings.HasPrefix(k, "$") {
			return nil, fmt.Errorf("%q is not supported", k)
		}
		switch v := v.(type) {
		case map[string]any:
			sub, err := compile(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			p.fields[k] = &patternNode{sub: sub}
		case []any:
			if len(v) == 0 {
				return nil, fmt.Errorf("%s: empty list of values", k)
			}
			n := &patternNode{}
			for _, x := range v {
				m, err := compileMatcher(x)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", k, err)
				}
				n.matchers = append(n.matchers, m)
			}
			p.fields[k] = n
		default:
			return nil, fmt.Errorf("%s: values must be in a list, like [%v]", k, v)
		}
	}
	return p, nil
}

func compileMatcher(x any) (matcher, error) {
	switch x := x.(type) {
	case string, bool, nil:
		return matcher{kind: "literal", literal: x}, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return matcher{}, err
		}
		return matcher{kind: "literal", literal: f}, nil
	case map[string]any:
		if len(x) != 1 {
			return matcher{}, errors.New("a matcher object has exactly one key")
		}
		for k, v := range x {
			switch k {
			case "prefix":
				s, ok := v.(string)
				if !ok {
					return matcher{}, errors.New("prefix takes a string")
				}
				return matcher{kind: "prefix", prefix: s}, nil
			case "exists":
				b, ok := v.(bool)
				if !ok {
					return matcher{}, errors.New("exists takes true or false")
				}
				return matcher{kind: "exists", exists: b}, nil
			case "numeric":
				list, ok := v.([]any)
				if !ok || len(list) == 0 || len(list)%2 != 0 || len(list) > 4 {
					return matcher{}, errors.New(`numeric takes one or two comparisons, like [">", 0, "<=", 5]`)
				}
				m := matcher{kind: "numeric"}
				for i := 0; i < len(list); i += 2 {
					op, _ := list[i].(string)
					num, ok := list[i+1].(json.Number)
					switch op {
					case "=", "<", "<=", ">", ">=":
					default:
						return matcher{}, fmt.Errorf("numeric operator %v is not one of = < <= > >=", list[i])
					}
					if !ok {
						return matcher{}, fmt.Errorf("numeric %s needs a number", op)
					}
					f, err := num.Float64()
					if err != nil {
						return matcher{}, err
					}
					m.numeric = append(m.numeric, numericCmp{op: op, n: f})
				}
				return m, nil
			default:
				return matcher{}, fmt.Errorf("matcher %q is not supported (supported: prefix, numeric, exists)", k)
			}
		}
	}
	return matcher{}, fmt.Errorf("unsupported value %v", x)
}

// Match reports whether doc (decoded JSON, numbers as float64) matches.
func (p *Pattern) Match(doc map[string]any) bool {
	for k, n := range p.fields {
		v, present := doc[k]
		if n.sub != nil {
			obj, ok := v.(map[string]any)
			if !ok || !n.sub.Match(obj) {
				return false
			}
			continue
		}
		if !n.matchLeaf(v, present) {
			return false
		}
	}
	return true
}

func (n *patternNode) matchLeaf(v any, present bool) bool {
	for _, m := range n.matchers {
		if m.kind == "exists" {
			if m.exists == present {
				return true
			}
			continue
		}
		if !present {
			continue
		}
		if list, ok := v.([]any); ok {
			for _, x := range list {
				if m.matchValue(x) {
					return true
				}
			}
			continue
		}
		if m.matchValue(v) {
			return true
		}
	}
	return false
}

func (m matcher) matchValue(v any) bool {
	switch m.kind {
	case "literal":
		return v == m.literal
	case "prefix":
		s, ok := v.(string)
		return ok && strings.HasPrefix(s, m.prefix)
	case "numeric":
		f, ok := v.(float64)
		if !ok {
			return false
		}
		for _, c := range m.numeric {
			var ok bool
			switch c.op {
			case "=":
				ok = f == c.n
			case "<":
				ok = f < c.n
			case "<=":
				ok = f <= c.n
			case ">":
				ok = f > c.n
			case ">=":
				ok = f >= c.n
			}
			if !ok {
				return false
			}
		}
		return true
	}
	return false
}

// filterDoc is the document a pattern is matched against.
func filterDoc(r Record) map[string]any {
	var doc map[string]any
	b, _ := json.Marshal(r)
	_ = json.Unmarshal(b, &doc)
	var body any
	if json.Valid([]byte(r.Body)) && json.Unmarshal([]byte(r.Body), &body) == nil {
		doc["body"] = body
	}
	return doc
}

// filters is a compiled FilterCriteria; nil passes everything.
type filters []*Pattern

func compileFilters(fc *FilterCriteria) (filters, error) {
	if fc == nil {
		return nil, nil
	}
	var out filters
	for _, f := range fc.Filters {
		p, err := ParsePattern(f.Pattern)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (fs filters) pass(r Record) bool {
	if len(fs) == 0 {
		return true
	}
	doc := filterDoc(r)
	for _, p := range fs {
		if p.Match(doc) {
			return true
		}
	}
	return false
}
