// Package filterpolicy is AWS's filter-policy language, compiled once and
// matched against decoded JSON: the language of SNS subscription filter
// policies (exact values, prefix, suffix, equals-ignore-case,
// anything-but, numeric, exists, cidr, $or, nested objects and dotted
// paths in a message body) and the subset Lambda's event filtering
// accepts for an SQS event source (exact values, prefix, numeric, exists,
// nested objects).
//
// Numbers have one behaviour everywhere, AWS's documented one for SNS:
// they are compared to five digits after the decimal point (see
// numberKey), for equality and for ranges alike.
//
// A compiled Policy is never modified after Compile returns, so one value
// may be matched from many goroutines.
package filterpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
)

// Dialect says which part of the language a policy may use and which
// limits it is held to.
type Dialect struct {
	// Lambda restricts the operators to Lambda's event filtering subset
	// (exact values, prefix, numeric, exists), refuses keys starting with
	// "$" and empty objects at any depth, and applies none of SNS's size
	// limits. Otherwise the whole SNS language is allowed under SNS's
	// limits (five keys, 150 combinations, numbers within ±1e9, 256 KB).
	Lambda bool
	// Body allows nested objects (a MessageBody-scope SNS policy, a Lambda
	// pattern). In SNS's body scope a dotted key also names a path, an
	// array of objects is looked into, and a missing object lets
	// exists:false below it match; Lambda's nested objects match only an
	// object.
	Body bool
}

// The dialects in use.
var (
	SNSAttributes = Dialect{}
	SNSBody       = Dialect{Body: true}
	Lambda        = Dialect{Lambda: true, Body: true}
)

// ErrNestedAttributes is returned for a nested object in a dialect
// without Body (SNS words this one apart from the other policy errors).
var ErrNestedAttributes = errors.New("nested filter policy is not supported in this scope")

// Policy is a compiled filter policy.
type Policy struct {
	root    *node
	dialect Dialect
}

// Compile parses and checks a policy's JSON text. Its errors describe the
// problem without naming the policy (callers add their prefix).
func Compile(text string, d Dialect) (*Policy, error) {
	if !d.Lambda && len(text) > 256*1024 {
		return nil, errors.New("Filter policy is too large")
	}
	var raw any
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, fmt.Errorf("failed to parse JSON: %v", err)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New("Filter policy must be a JSON object")
	}
	if len(obj) == 0 {
		return nil, errors.New("Filter policy must not be empty")
	}
	// At most five keys, counting a nested policy's parent keys only.
	if !d.Lambda && len(obj) > 5 {
		return nil, errors.New("Filter policy can not have more than 5 keys")
	}
	c := &compiler{d: d}
	root, combos, err := c.node(obj, 1, 1)
	if err != nil {
		return nil, err
	}
	if !d.Lambda && combos > 150 {
		return nil, errors.New("Filter policy is too complex")
	}
	return &Policy{root: root, dialect: d}, nil
}

type node struct {
	clauses []clause // AND'ed
}

type clause struct {
	key    string
	conds  []condition // OR'ed; a leaf
	nested *node       // a nested object
	or     []*node     // "$or"
}

type condition interface {
	// match reports whether one value matches. present is false when the
	// key is absent (value is then nil).
	match(v any, present bool) bool
}

type compiler struct {
	d Dialect
}

// node compiles a policy object at nesting depth (1 for the top) and
// returns the number of value combinations as AWS counts them for its
// limit of 150: each array multiplies the count by its length and by its
// depth (AWS's example: four values three levels deep and three values two
// levels deep make 3 × 4 × 2 × 3 = 72), and the branches of "$or" add up,
// each counted from what precedes it.
func (c *compiler) node(obj map[string]any, depth, combos int) (*node, int, error) {
	if !c.d.Lambda && depth > 10 {
		return nil, 0, errors.New("Filter policy is nested too deeply")
	}
	if c.d.Lambda && len(obj) == 0 {
		return nil, 0, errors.New("empty pattern object")
	}
	n := &node{}
	for key, v := range obj {
		if c.d.Lambda && strings.HasPrefix(key, "$") {
			return nil, 0, fmt.Errorf("%q is not supported", key)
		}
		if key == "$or" {
			arr, ok := v.([]any)
			if !ok || len(arr) < 2 {
				return nil, 0, errors.New("$or must be an array of at least two objects")
			}
			cl := clause{key: key}
			sum := 0
			for _, e := range arr {
				sub, ok := e.(map[string]any)
				if !ok {
					return nil, 0, errors.New("$or must be an array of objects")
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
				return nil, 0, c.keyError(key, errors.New("Empty arrays are not allowed"))
			}
			cl := clause{key: key}
			for _, e := range v {
				cond, err := c.condition(e)
				if err != nil {
					return nil, 0, c.keyError(key, err)
				}
				cl.conds = append(cl.conds, cond)
			}
			n.clauses = append(n.clauses, cl)
			combos *= len(v) * depth
		case map[string]any:
			if !c.d.Body {
				return nil, 0, ErrNestedAttributes
			}
			sn, sc, err := c.node(v, depth+1, combos)
			if err != nil {
				return nil, 0, c.keyError(key, err)
			}
			n.clauses = append(n.clauses, clause{key: key, nested: sn})
			combos = sc
		default:
			if c.d.Lambda {
				return nil, 0, fmt.Errorf("%s: values must be in a list, like [%v]", key, v)
			}
			return nil, 0, fmt.Errorf("\"%s\" must be an object or an array", key)
		}
		if combos > 1_000_000 {
			combos = 1_000_000
		}
	}
	return n, combos, nil
}

// keyError names the key an error was found under, for Lambda patterns
// (SNS's own words name no key).
func (c *compiler) keyError(key string, err error) error {
	if !c.d.Lambda {
		return err
	}
	return fmt.Errorf("%s: %w", key, err)
}

// lambdaOperators are the operators Lambda's event filtering accepts here.
var lambdaOperators = map[string]bool{"prefix": true, "numeric": true, "exists": true}

func (c *compiler) condition(e any) (condition, error) {
	switch v := e.(type) {
	case string, bool, nil:
		return exact{v}, nil
	case float64:
		if err := c.checkNumber(v); err != nil {
			return nil, err
		}
		return exact{v}, nil
	case map[string]any:
		if len(v) != 1 {
			return nil, errors.New("Match rules must have exactly one operator")
		}
		for op, arg := range v {
			if c.d.Lambda && !lambdaOperators[op] {
				return nil, fmt.Errorf("matcher %q is not supported (supported: prefix, numeric, exists)", op)
			}
			switch op {
			case "prefix", "suffix", "equals-ignore-case":
				s, ok := arg.(string)
				if !ok {
					return nil, fmt.Errorf("%s match pattern must be a string", op)
				}
				return stringOp{op: op, s: s}, nil
			case "anything-but":
				return c.anythingBut(arg)
			case "numeric":
				return c.numeric(arg)
			case "exists":
				b, ok := arg.(bool)
				if !ok {
					return nil, errors.New("exists match pattern must be either true or false.")
				}
				return exists(b), nil
			case "cidr":
				s, ok := arg.(string)
				if !ok {
					return nil, errors.New("cidr match pattern must be a string")
				}
				_, ipnet, err := net.ParseCIDR(s)
				if err != nil {
					return nil, errors.New("Malformed CIDR, one '/' required")
				}
				return cidr{ipnet}, nil
			default:
				return nil, fmt.Errorf("Unrecognized match type %s", op)
			}
		}
	}
	return nil, errors.New("Match value must be String, number, true, false, or null")
}

// checkNumber holds a policy's number to SNS's range.
func (c *compiler) checkNumber(f float64) error {
	if !c.d.Lambda && math.Abs(f) > 1e9 {
		return errors.New("Numeric values must be within -1e9 and 1e9")
	}
	return nil
}

func (c *compiler) anythingBut(arg any) (condition, error) {
	switch a := arg.(type) {
	case string, float64:
		return anythingBut{values: []any{a}}, nil
	case []any:
		if len(a) == 0 {
			return nil, errors.New("Empty arrays are not allowed")
		}
		for _, e := range a {
			switch e.(type) {
			case string, float64:
			default:
				return nil, errors.New("anything-but list must contain only strings or numbers")
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
	return nil, errors.New("Value of anything-but must be an array or single string/number value.")
}

// numeric compiles one or two comparisons. SNS wants a range written
// lower bound first and no "=" in a pair; Lambda patterns were taken
// without that rule here and still are.
func (c *compiler) numeric(arg any) (condition, error) {
	a, ok := arg.([]any)
	if !ok || len(a) == 0 || len(a)%2 != 0 || len(a) > 4 {
		return nil, errors.New("Value of numeric must be an array of one or two operator/value pairs")
	}
	var out numeric
	for i := 0; i < len(a); i += 2 {
		op, ok1 := a[i].(string)
		switch op {
		case "=", "<", "<=", ">", ">=":
		default:
			return nil, fmt.Errorf("Unrecognized numeric range operator: %v", a[i])
		}
		n, ok2 := a[i+1].(float64)
		if !ok1 || !ok2 {
			return nil, errors.New("Value of numeric must be an array of operator/number pairs")
		}
		if err := c.checkNumber(n); err != nil {
			return nil, err
		}
		if !c.d.Lambda && len(a) == 4 && (op == "=" || (i == 0 && op[0] != '>') || (i == 2 && op[0] != '<')) {
			return nil, fmt.Errorf("Bad numeric range operator: %s", op)
		}
		out = append(out, bound{op, numberKey(n)})
	}
	return out, nil
}
