package filterpolicy

import (
	"math"
	"net"
	"strings"
)

// numberKey is a number as the language compares it: to five digits after
// the decimal point, AWS's documented accuracy for SNS filter policies
// ("five digits of accuracy after the decimal point"). Two numbers that
// agree to five decimal places are equal, for "=" and exact values, and
// neither is less than the other, for ranges.
func numberKey(f float64) float64 { return math.Round(f * 1e5) }

// Match reports whether a decoded JSON object (numbers as float64)
// matches the policy.
func (p *Policy) Match(doc map[string]any) bool {
	return p.root.match(doc, p.dialect)
}

func (n *node) match(obj map[string]any, d Dialect) bool {
	for _, cl := range n.clauses {
		if !cl.match(obj, d) {
			return false
		}
	}
	return true
}

func (cl clause) match(obj map[string]any, d Dialect) bool {
	if cl.or != nil {
		for _, sub := range cl.or {
			if sub.match(obj, d) {
				return true
			}
		}
		return false
	}
	paths := d.Body && !d.Lambda
	v, present := obj[cl.key]
	if !present && paths && strings.Contains(cl.key, ".") {
		// In an SNS message body a dotted key names a nested path:
		// {"a.b":[1]} is {"a":{"b":[1]}}.
		var found []any
		walkPath(obj, strings.Split(cl.key, "."), &found)
		if len(found) > 0 {
			v, present = found, true
		}
	}
	if cl.nested != nil {
		switch sub := v.(type) {
		case map[string]any:
			return cl.nested.match(sub, d)
		case []any:
			if !paths {
				return false
			}
			// An array of objects: the policy below matches if it matches
			// one of them.
			objects := false
			for _, e := range sub {
				if m, ok := e.(map[string]any); ok {
					objects = true
					if cl.nested.match(m, d) {
						return true
					}
				}
			}
			if objects {
				return false
			}
		}
		if !paths {
			return false
		}
		// a missing object still lets exists:false match below it
		return cl.nested.match(map[string]any{}, d)
	}
	values := []any{v}
	if arr, ok := v.([]any); ok && present {
		values = arr
		if len(arr) == 0 {
			values = []any{nil}
			present = false
		}
	}
	for _, c := range cl.conds {
		for _, x := range values {
			if c.match(x, present) {
				return true
			}
		}
	}
	return false
}

// walkPath adds to found the values at path below v, looking into arrays
// on the way (an array of objects holds the path in each object).
func walkPath(v any, path []string, found *[]any) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			walkPath(e, path, found)
		}
	case map[string]any:
		if len(path) == 0 {
			*found = append(*found, x)
			return
		}
		if next, ok := x[path[0]]; ok {
			if len(path) == 1 {
				if arr, ok := next.([]any); ok {
					*found = append(*found, arr...)
				} else {
					*found = append(*found, next)
				}
				return
			}
			walkPath(next, path[1:], found)
		}
	}
}

type exact struct{ v any }

func (c exact) match(v any, present bool) bool {
	if !present {
		return false
	}
	if w, ok := c.v.(float64); ok {
		f, ok := v.(float64)
		return ok && numberKey(f) == numberKey(w)
	}
	return v == c.v
}

type stringOp struct {
	op string
	s  string
}

func (c stringOp) match(v any, present bool) bool {
	s, ok := v.(string)
	if !present || !ok {
		return false
	}
	switch c.op {
	case "prefix":
		return strings.HasPrefix(s, c.s)
	case "suffix":
		return strings.HasSuffix(s, c.s)
	default:
		return strings.EqualFold(s, c.s)
	}
}

type anythingBut struct {
	values []any
	inner  condition
}

func (c anythingBut) match(v any, present bool) bool {
	if !present {
		return false
	}
	if c.inner != nil {
		if _, ok := v.(string); !ok {
			return false
		}
		return !c.inner.match(v, true)
	}
	for _, w := range c.values {
		if (exact{w}).match(v, true) {
			return false
		}
	}
	return true
}

// bound is one comparison of a numeric condition, its number as a
// numberKey.
type bound struct {
	op  string
	key float64
}

type numeric []bound

func (c numeric) match(v any, present bool) bool {
	f, ok := v.(float64)
	if !present || !ok {
		return false
	}
	k := numberKey(f)
	for _, b := range c {
		var ok bool
		switch b.op {
		case "=":
			ok = k == b.key
		case "<":
			ok = k < b.key
		case "<=":
			ok = k <= b.key
		case ">":
			ok = k > b.key
		case ">=":
			ok = k >= b.key
		}
		if !ok {
			return false
		}
	}
	return true
}

type exists bool

func (c exists) match(_ any, present bool) bool { return bool(c) == present }

type cidr struct{ n *net.IPNet }

func (c cidr) match(v any, present bool) bool {
	s, ok := v.(string)
	if !present || !ok {
		return false
	}
	ip := net.ParseIP(s)
	return ip != nil && c.n.Contains(ip)
}
