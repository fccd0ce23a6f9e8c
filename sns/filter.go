package sns

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
)

// Filter policy scopes.
const (
	ScopeMessageAttributes = "MessageAttributes"
	ScopeMessageBody       = "MessageBody"
)

// FilterPolicy is a compiled subscription filter policy.
type FilterPolicy struct {
	root  *policyNode
	scope string
}

type policyNode struct {
	clauses []clause // AND'ed
}

type clause struct {
	key    string
	body   bool          // MessageBody scope: a dotted key is a path, arrays of objects are looked into
	conds  []condition   // OR'ed; a leaf
	nested *policyNode   // MessageBody scope: a nested object
	or     []*policyNode // "$or"
}

type condition interface {
	// match reports whether one value matches. present is false when the
	// key is absent (value is then nil).
	match(v any, present bool) bool
}

func filterError(format string, args ...any) *tidemq.Error {
	return &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter, Message: fmt.Sprintf("Invalid parameter: FilterPolicy: "+format, args...)}
}

// CompileFilterPolicy parses and checks a filter policy for a scope
// ("" means MessageAttributes).
func CompileFilterPolicy(policy, scope string) (*FilterPolicy, error) {
	if scope == "" {
		scope = ScopeMessageAttributes
	}
	if scope != ScopeMessageAttributes && scope != ScopeMessageBody {
		return nil, InvalidParameter("Attributes", "FilterPolicyScope: Invalid value ["+scope+"]. Please use either MessageBody or MessageAttributes")
	}
	if len(policy) > 256*1024 {
		return nil, filterError("Filter policy is too large")
	}
	var raw any
	if err := json.Unmarshal([]byte(policy), &raw); err != nil {
		return nil, filterError("failed to parse JSON: %v", err)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, filterError("Filter policy must be a JSON object")
	}
	if len(obj) == 0 {
		return nil, filterError("Filter policy must not be empty")
	}
	// At most five keys, counting a nested policy's parent keys only.
	if len(obj) > 5 {
		return nil, filterError("Filter policy can not have more than 5 keys")
	}
	c := &compiler{body: scope == ScopeMessageBody}
	root, combos, err := c.node(obj, 1, 1)
	if err != nil {
		return nil, err
	}
	if combos > 150 {
		return nil, filterError("Filter policy is too complex")
	}
	return &FilterPolicy{root: root, scope: scope}, nil
}

type compiler struct {
	body bool
}

// node compiles a policy object at nesting depth (1 for the top) and
// returns the number of value combinations as AWS counts them for its
// limit of 150: each array multiplies the count by its length and by its
// depth (AWS's example: four values three levels deep and three values two
// levels deep make 3 × 4 × 2 × 3 = 72), and the branches of "$or" add up,
// each counted from what precedes it.
func (c *compiler) node(obj map[string]any, depth, combos int) (*policyNode, int, error) {
	if depth > 10 {
		return nil, 0, filterError("Filter policy is nested too deeply")
	}
	n := &policyNode{}
	for key, v := range obj {
		if key == "$or" {
			arr, ok := v.([]any)
			if !ok || len(arr) < 2 {
				return nil, 0, filterError("$or must be an array of at least two objects")
			}
			cl := clause{key: key}
			sum := 0
			for _, e := range arr {
				sub, ok := e.(map[string]any)
				if !ok {
					return nil, 0, filterError("$or must be an array of objects")
				}
				sn, sc, err := c.node(sub, depth, combos)
				if err != nil {
					return nil, 0, err
				}
				cl.or = append(cl.or, sn)
				sum += sc
			}
			n.clauses = append(n.clauses, cl)
			combos = sum
			continue
		}
		switch v := v.(type) {
		case []any:
			if len(v) == 0 {
				return nil, 0, filterError("Empty arrays are not allowed")
			}
			cl := clause{key: key, body: c.body}
			for _, e := range v {
				cond, err := c.condition(e)
				if err != nil {
					return nil, 0, err
				}
				cl.conds = append(cl.conds, cond)
			}
			n.clauses = append(n.clauses, cl)
			combos *= len(v) * depth
		case map[string]any:
			if !c.body {
				return nil, 0, &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter,
					Message: "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"}
			}
			sn, sc, err := c.node(v, depth+1, combos)
			if err != nil {
				return nil, 0, err
			}
			n.clauses = append(n.clauses, clause{key: key, nested: sn, body: c.body})
			combos = sc
		default:
			return nil, 0, filterError("\"%s\" must be an object or an array", key)
		}
		if combos > 1_000_000 {
			combos = 1_000_000
		}
	}
	return n, combos, nil
}

func (c *compiler) condition(e any) (condition, error) {
	switch v := e.(type) {
	case string, float64, bool, nil:
		if f, ok := v.(float64); ok && math.Abs(f) > 1e9 {
			return nil, filterError("Numeric values must be within -1e9 and 1e9")
		}
		return exact{v}, nil
	case map[string]any:
		if len(v) != 1 {
			return nil, filterError("Match rules must have exactly one operator")
		}
		for op, arg := range v {
			switch op {
			case "prefix", "suffix", "equals-ignore-case":
				s, ok := arg.(string)
				if !ok {
					return nil, filterError("%s match pattern must be a string", op)
				}
				return stringOp{op: op, s: s}, nil
			case "anything-but":
				return c.anythingBut(arg)
			case "numeric":
				return compileNumeric(arg)
			case "exists":
				b, ok := arg.(bool)
				if !ok {
					return nil, filterError("exists match pattern must be either true or false.")
				}
				return exists(b), nil
			case "cidr":
				s, ok := arg.(string)
				if !ok {
					return nil, filterError("cidr match pattern must be a string")
				}
				_, ipnet, err := net.ParseCIDR(s)
				if err != nil {
					return nil, filterError("Malformed CIDR, one '/' required")
				}
				return cidr{ipnet}, nil
			default:
				return nil, filterError("Unrecognized match type %s", op)
			}
		}
	}
	return nil, filterError("Match value must be String, number, true, false, or null")
}

func (c *compiler) anythingBut(arg any) (condition, error) {
	switch a := arg.(type) {
	case string, float64:
		return anythingBut{values: []any{a}}, nil
	case []any:
		if len(a) == 0 {
			return nil, filterError("Empty arrays are not allowed")
		}
		for _, e := range a {
			switch e.(type) {
			case string, float64:
			default:
				return nil, filterError("anything-but list must contain only strings or numbers")
			}
		}
		return anythingBut{values: a}, nil
	case map[string]any:
		if len(a) == 1 {
			for op, v := range a {
				s, ok := v.(string)
				if ok && (op == "prefix" || op == "suffix" || op == "equals-ignore-case") {
					return anythingBut{inner: stringOp{op: op, s: s}}, nil
				}
			}
		}
	}
	return nil, filterError("Value of anything-but must be an array or single string/number value.")
}

type exact struct{ v any }

func (c exact) match(v any, present bool) bool {
	if !present {
		return false
	}
	switch w := c.v.(type) {
	case float64:
		f, ok := v.(float64)
		return ok && math.Abs(f-w) < 1e-5
	default:
		return v == c.v
	}
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

type numericBound struct {
	op string
	n  float64
}

type numeric []numericBound

func compileNumeric(arg any) (condition, error) {
	a, ok := arg.([]any)
	if !ok || len(a) == 0 || len(a)%2 != 0 || len(a) > 4 {
		return nil, filterError("Value of numeric must be an array of one or two operator/value pairs")
	}
	var out numeric
	for i := 0; i < len(a); i += 2 {
		op, ok1 := a[i].(string)
		n, ok2 := a[i+1].(float64)
		if !ok1 || !ok2 {
			return nil, filterError("Value of numeric must be an array of operator/number pairs")
		}
		switch op {
		case "=", "<", "<=", ">", ">=":
		default:
			return nil, filterError("Unrecognized numeric range operator: %s", op)
		}
		if math.Abs(n) > 1e9 {
			return nil, filterError("Numeric values must be within -1e9 and 1e9")
		}
		if len(a) == 4 && (op == "=" || (i == 0 && op[0] != '>') || (i == 2 && op[0] != '<')) {
			return nil, filterError("Bad numeric range operator: %s", op)
		}
		out = append(out, numericBound{op, n})
	}
	return out, nil
}

func (c numeric) match(v any, present bool) bool {
	f, ok := v.(float64)
	if !present || !ok {
		return false
	}
	for _, b := range c {
		var ok bool
		switch b.op {
		case "=":
			ok = math.Abs(f-b.n) < 1e-5
		case "<":
			ok = f < b.n
		case "<=":
			ok = f <= b.n
		case ">":
			ok = f > b.n
		case ">=":
			ok = f >= b.n
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

func (n *policyNode) match(obj map[string]any) bool {
	for _, cl := range n.clauses {
		if !cl.match(obj) {
			return false
		}
	}
	return true
}

func (cl clause) match(obj map[string]any) bool {
	if cl.or != nil {
		for _, sub := range cl.or {
			if sub.match(obj) {
				return true
			}
		}
		return false
	}
	v, present := obj[cl.key]
	if !present && cl.body && strings.Contains(cl.key, ".") {
		// In a message body a dotted key names a nested path: {"a.b":[1]}
		// is {"a":{"b":[1]}}.
		var found []any
		walkPath(obj, strings.Split(cl.key, "."), &found)
		if len(found) > 0 {
			v, present = found, true
		}
	}
	if cl.nested != nil {
		switch sub := v.(type) {
		case map[string]any:
			return cl.nested.match(sub)
		case []any:
			// An array of objects: the policy below matches if it matches
			// one of them.
			objects := false
			for _, e := range sub {
				if m, ok := e.(map[string]any); ok {
					objects = true
					if cl.nested.match(m) {
						return true
					}
				}
			}
			if objects {
				return false
			}
		}
		// a missing object still lets exists:false match below it
		return cl.nested.match(map[string]any{})
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

// MatchAttributes reports whether message attributes match the policy
// (MessageAttributes scope). Binary attributes are ignored.
func (p *FilterPolicy) MatchAttributes(attrs map[string]Attribute) bool {
	obj := make(map[string]any, len(attrs))
	for name, a := range attrs {
		switch {
		case strings.HasPrefix(a.DataType, "String.Array"):
			var arr []any
			if json.Unmarshal([]byte(a.StringValue), &arr) == nil {
				obj[name] = arr
			} else {
				obj[name] = a.StringValue
			}
		case strings.HasPrefix(a.DataType, "Number"):
			f, err := strconv.ParseFloat(a.StringValue, 64)
			if err == nil {
				obj[name] = f
			} else {
				obj[name] = a.StringValue
			}
		case strings.HasPrefix(a.DataType, "String"):
			obj[name] = a.StringValue
		}
	}
	return p.root.match(obj)
}

// MatchBody reports whether a message body matches the policy (MessageBody
// scope). A body that is not a JSON object matches nothing.
func (p *FilterPolicy) MatchBody(body string) bool {
	var obj map[string]any
	if json.Unmarshal([]byte(body), &obj) != nil || obj == nil {
		return false
	}
	return p.root.match(obj)
}

// Match applies the policy in its scope.
func (p *FilterPolicy) Match(body string, attrs map[string]Attribute) bool {
	if p.scope == ScopeMessageBody {
		return p.MatchBody(body)
	}
	return p.MatchAttributes(attrs)
}

// Attribute is an SNS message attribute. BinaryValue holds raw bytes.
type Attribute struct {
	DataType    string
	StringValue string
	BinaryValue []byte
}

// envelopeValue is the attribute's Value in the delivery envelope.
func (a Attribute) envelopeValue() string {
	if strings.HasPrefix(a.DataType, "Binary") {
		return base64.StdEncoding.EncodeToString(a.BinaryValue)
	}
	return a.StringValue
}
