package topology

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// noValue is what AWS::NoValue evaluates to: the property is dropped.
type noValueType struct{}

var noValue = noValueType{}

// eval evaluates a template value: intrinsic functions are applied,
// parameters and pseudo parameters substituted, and references to
// resources turned into the physical values they stand for (a queue's URL
// for Ref, its ARN for GetAtt .Arn, ...). The result is a string, []any,
// map[string]any, nil or noValue. Numbers and booleans stay strings.
func (t *template) eval(n *node) (any, error) {
	if n == nil {
		return nil, nil
	}
	switch n.kind {
	case kindNull:
		return nil, nil
	case kindScalar:
		return n.str, nil
	case kindSeq:
		out := make([]any, 0, len(n.items))
		for _, it := range n.items {
			v, err := t.eval(it)
			if err != nil {
				return nil, err
			}
			if v == noValue {
				continue
			}
			out = append(out, v)
		}
		return out, nil
	}
	if len(n.entries) == 1 {
		e := n.entries[0]
		if e.key == "Ref" || strings.HasPrefix(e.key, "Fn::") {
			v, err := t.intrinsic(e.key, e.val)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: %w", e.keyLine, e.key, err)
			}
			return v, nil
		}
	}
	out := make(map[string]any, len(n.entries))
	for _, e := range n.entries {
		v, err := t.eval(e.val)
		if err != nil {
			return nil, err
		}
		if v == noValue {
			continue
		}
		out[e.key] = v
	}
	return out, nil
}

func (t *template) evalString(n *node) (string, error) {
	v, err := t.eval(n)
	if err != nil {
		return "", err
	}
	return asString(v)
}

func asString(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case noValueType:
		return "", nil
	}
	return "", fmt.Errorf("expected a string, got %T", v)
}

func (t *template) intrinsic(fn string, arg *node) (any, error) {
	switch fn {
	case "Ref":
		name, err := t.evalString(arg)
		if err != nil {
			return nil, err
		}
		return t.ref(name)
	case "Fn::GetAtt":
		v, err := t.eval(arg)
		if err != nil {
			return nil, err
		}
		var res, attr string
		switch x := v.(type) {
		case []any:
			if len(x) != 2 {
				return nil, fmt.Errorf("needs [resource, attribute]")
			}
			res, _ = asString(x[0])
			attr, _ = asString(x[1])
		case string:
			res, attr, _ = strings.Cut(x, ".")
		}
		return t.getAtt(res, attr)
	case "Fn::Sub":
		return t.sub(arg)
	case "Fn::Join":
		v, err := t.eval(arg)
		if err != nil {
			return nil, err
		}
		args, ok := v.([]any)
		if !ok || len(args) != 2 {
			return nil, fmt.Errorf("needs [delimiter, [values]]")
		}
		sep, _ := asString(args[0])
		list, ok := args[1].([]any)
		if !ok {
			return nil, fmt.Errorf("needs a list of values")
		}
		parts := make([]string, 0, len(list))
		for _, it := range list {
			s, err := asString(it)
			if err != nil {
				return nil, err
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, sep), nil
	case "Fn::Select":
		v, err := t.eval(arg)
		if err != nil {
			return nil, err
		}
		args, ok := v.([]any)
		if !ok || len(args) != 2 {
			return nil, fmt.Errorf("needs [index, list]")
		}
		is, _ := asString(args[0])
		i, err := strconv.Atoi(is)
		list, ok := args[1].([]any)
		if err != nil || !ok || i < 0 || i >= len(list) {
			return nil, fmt.Errorf("index %q out of range", is)
		}
		return list[i], nil
	case "Fn::Split":
		v, err := t.eval(arg)
		if err != nil {
			return nil, err
		}
		args, ok := v.([]any)
		if !ok || len(args) != 2 {
			return nil, fmt.Errorf("needs [delimiter, string]")
		}
		sep, _ := asString(args[0])
		s, err := asString(args[1])
		if err != nil {
			return nil, err
		}
		var out []any
		for _, p := range strings.Split(s, sep) {
			out = append(out, p)
		}
		return out, nil
	case "Fn::FindInMap":
		v, err := t.eval(arg)
		if err != nil {
			return nil, err
		}
		args, ok := v.([]any)
		if !ok || len(args) < 3 {
			return nil, fmt.Errorf("needs [map, top-level key, second-level key]")
		}
		var keys [3]string
		for i := range keys {
			keys[i], _ = asString(args[i])
		}
		val := t.root.get("Mappings").get(keys[0]).get(keys[1]).get(keys[2])
		if val == nil {
			if len(args) == 4 { // [map, k1, k2, {DefaultValue: x}]
				if m, ok := args[3].(map[string]any); ok {
					if d, ok := m["DefaultValue"]; ok {
						return d, nil
					}
				}
			}
			return nil, fmt.Errorf("no mapping %s/%s/%s", keys[0], keys[1], keys[2])
		}
		return t.eval(val)
	case "Fn::If":
		if arg.kind != kindSeq || len(arg.items) != 3 {
			return nil, fmt.Errorf("needs [condition, value if true, value if false]")
		}
		cond, err := t.evalString(arg.items[0])
		if err != nil {
			return nil, err
		}
		ok, err := t.condition(cond)
		if err != nil {
			return nil, err
		}
		if ok {
			return t.eval(arg.items[1])
		}
		return t.eval(arg.items[2])
	case "Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or":
		b, err := t.condExpr(&node{kind: kindMap, entries: []entry{{key: fn, val: arg}}})
		return strconv.FormatBool(b), err
	case "Fn::Base64":
		s, err := t.evalString(arg)
		return base64.StdEncoding.EncodeToString([]byte(s)), err
	case "Fn::GetAZs":
		r := t.opts.Region
		return []any{r + "a", r + "b", r + "c"}, nil
	case "Fn::ImportValue":
		s, err := t.evalString(arg)
		t.note(fmt.Sprintf("line %d: Fn::ImportValue %s cannot be resolved here; kept as a placeholder", arg.line, s))
		return "imported:" + s, err
	case "Fn::ToJsonString":
		v, err := t.eval(arg)
		if err != nil {
			return nil, err
		}
		return jsonText(v), nil
	}
	return nil, fmt.Errorf("unsupported intrinsic function")
}

var subVar = regexp.MustCompile(`\$\{([^}]*)\}`)

func (t *template) sub(arg *node) (any, error) {
	var text string
	vars := map[string]any{}
	switch arg.kind {
	case kindScalar:
		text = arg.str
	case kindSeq:
		if len(arg.items) != 2 {
			return nil, fmt.Errorf("needs a string or [string, {variables}]")
		}
		text = arg.items[0].str
		v, err := t.eval(arg.items[1])
		if err != nil {
			return nil, err
		}
		if m, ok := v.(map[string]any); ok {
			vars = m
		}
	default:
		return nil, fmt.Errorf("needs a string or [string, {variables}]")
	}
	var firstErr error
	out := subVar.ReplaceAllStringFunc(text, func(m string) string {
		name := m[2 : len(m)-1]
		if strings.HasPrefix(name, "!") {
			return "${" + name[1:] + "}"
		}
		var v any
		var err error
		if x, ok := vars[name]; ok {
			v = x
		} else if res, attr, ok := strings.Cut(name, "."); ok && !strings.HasPrefix(name, "AWS::") {
			v, err = t.getAtt(res, attr)
		} else {
			v, err = t.ref(name)
		}
		s, err2 := asString(v)
		if err == nil {
			err = err2
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("${%s}: %w", name, err)
		}
		return s
	})
	return out, firstErr
}

func (t *template) condition(name string) (bool, error) {
	if v, ok := t.conds[name]; ok {
		return v, nil
	}
	c := t.root.get("Conditions").get(name)
	if c == nil {
		return false, fmt.Errorf("no condition %q", name)
	}
	if t.evaluating[name] {
		return false, fmt.Errorf("condition %s depends on itself", name)
	}
	t.evaluating[name] = true
	defer delete(t.evaluating, name)
	v, err := t.condExpr(c)
	if err != nil {
		return false, err
	}
	t.conds[name] = v
	return v, nil
}

func (t *template) condExpr(n *node) (bool, error) {
	if n == nil || n.kind != kindMap || len(n.entries) != 1 {
		s, err := t.evalString(n)
		return s == "true", err
	}
	e := n.entries[0]
	switch e.key {
	case "Condition":
		return t.condition(e.val.str)
	case "Fn::Equals":
		if e.val.kind != kindSeq || len(e.val.items) != 2 {
			return false, fmt.Errorf("line %d: Fn::Equals needs two values", e.keyLine)
		}
		a, err := t.eval(e.val.items[0])
		if err != nil {
			return false, err
		}
		b, err := t.eval(e.val.items[1])
		if err != nil {
			return false, err
		}
		return jsonText(a) == jsonText(b), nil
	case "Fn::Not":
		if e.val.kind != kindSeq || len(e.val.items) != 1 {
			return false, fmt.Errorf("line %d: Fn::Not needs one condition", e.keyLine)
		}
		b, err := t.condExpr(e.val.items[0])
		return !b, err
	case "Fn::And", "Fn::Or":
		and := e.key == "Fn::And"
		res := and
		for _, it := range e.val.items {
			b, err := t.condExpr(it)
			if err != nil {
				return false, err
			}
			if and {
				res = res && b
			} else {
				res = res || b
			}
		}
		return res, nil
	}
	s, err := t.evalString(n)
	return s == "true", err
}

func (t *template) ref(name string) (any, error) {
	switch name {
	case "AWS::Region":
		return t.opts.Region, nil
	case "AWS::AccountId":
		return t.opts.AccountID, nil
	case "AWS::StackName":
		return t.opts.StackName, nil
	case "AWS::StackId":
		return fmt.Sprintf("arn:%s:cloudformation:%s:%s:stack/%s/00000000-0000-0000-0000-000000000000", t.opts.Partition, t.opts.Region, t.opts.AccountID, t.opts.StackName), nil
	case "AWS::Partition":
		return t.opts.Partition, nil
	case "AWS::URLSuffix":
		return "amazonaws.com", nil
	case "AWS::NotificationARNs":
		return []any{}, nil
	case "AWS::NoValue":
		return noValue, nil
	}
	if v, ok := t.params[name]; ok {
		return v, nil
	}
	r := t.resources[name]
	if r == nil {
		return nil, fmt.Errorf("unknown reference %q", name)
	}
	switch r.typ {
	case typeQueue:
		n, err := t.physicalName(r)
		return fmt.Sprintf("https://sqs.%s.amazonaws.com/%s/%s", t.opts.Region, t.opts.AccountID, n), err
	case typeTopic:
		n, err := t.physicalName(r)
		return t.arn("sns", n), err
	case typeFunction, typeServerlessFunction:
		return t.physicalName(r)
	}
	return name, nil
}

func (t *template) getAtt(res, attr string) (any, error) {
	r := t.resources[res]
	if r == nil {
		return nil, fmt.Errorf("unknown resource %q", res)
	}
	n, err := t.physicalName(r)
	if err != nil {
		return nil, err
	}
	switch r.typ + "." + attr {
	case typeQueue + ".Arn":
		return t.arn("sqs", n), nil
	case typeQueue + ".QueueName", typeTopic + ".TopicName":
		return n, nil
	case typeQueue + ".QueueUrl":
		return t.ref(res)
	case typeTopic + ".TopicArn":
		return t.arn("sns", n), nil
	case typeFunction + ".Arn", typeServerlessFunction + ".Arn":
		return t.arn("lambda", "function:"+n), nil
	}
	return res + "." + attr, nil
}

func (t *template) arn(service, resource string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", t.opts.Partition, service, t.opts.Region, t.opts.AccountID, resource)
}
