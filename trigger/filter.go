package trigger

import (
	"encoding/json"

	"github.com/tidemq/tidemq/filterpolicy"
)

// Pattern is a compiled event filtering pattern: Lambda's subset of the
// filter-policy language (package filterpolicy, dialect Lambda), applied
// to the record as Lambda shows it ({"body": ..., "attributes": {...},
// "messageAttributes": {...}}), with the body parsed when it is JSON and
// kept as a string otherwise.
//
// Supported: nested objects of field names; at a leaf, a list of matchers
// of which one must match (a field holding a list matches when one of its
// elements does). A matcher is
//
//   - a literal string, number, true, false or null: equality (numbers to
//     five decimal places, as everywhere in filterpolicy);
//   - {"prefix": "text"}: a string starting with text;
//   - {"numeric": [">", 0, "<=", 5]}: a number meeting every comparison
//     (=, <, <=, >, >=);
//   - {"exists": true|false}: whether the field is there.
//
// Every field of a pattern must match. Not supported (refused):
// anything-but, suffix, equals-ignore-case, wildcard, cidr and $or.
type Pattern = filterpolicy.Policy

// ParsePattern compiles a pattern from its JSON text.
func ParsePattern(s string) (*Pattern, error) {
	return filterpolicy.Compile(s, filterpolicy.Lambda)
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
