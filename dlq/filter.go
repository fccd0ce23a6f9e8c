package dlq

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// FilterHelp documents the filter language (shown by --help).
const FilterHelp = `A filter selects messages with a small expression language:

  body                  the body, as sent
  attr.NAME             a message attribute's value (attr["odd.name"] for any name)
  sys.NAME              a system attribute: sys.ApproximateReceiveCount,
                        sys.MessageGroupId, sys.DeadLetterQueueSourceArn, ...
  json.a.b[0].c         a member of the body parsed as JSON
  inner.a.b             a member of the SNS-unwrapped message (the body when it
                        is not an envelope)
                        A path goes through members that are JSON strings
                        holding JSON: json.Message.caseId,
                        inner.eventDetail.retry_count
  NAME                  shorthand: attr.NAME if the message has it, else inner.NAME

  X == V   X != V       equality; V is "a string", 'a string', a number, true,
                        false, null or a bare word (key=value works too)
  X < N  X <= N  X > N  X >= N       numeric comparisons
  X.contains("s")  X.startsWith("s")  X.endsWith("s")  X.matches("regexp")
  has(X)                X is present
  !E   E && F   E || F   ( E )

Examples:
  body.contains("timeout")
  attr.tenant == "acme" && sys.ApproximateReceiveCount >= 2
  json.Type == "Notification" && inner.eventType == DOCUMENT_PROCESSED
  inner.eventDetail.retry_count >= 3      (eventDetail is a JSON string)
  has(attr["tidemq.redriven"]) == false   (or: !has(attr["tidemq.redriven"]))
  eventType=ORDER_FAILED`

// Filter is a compiled filter expression. A nil *Filter matches everything.
type Filter struct {
	src  string
	root node
}

// String returns the expression.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return f.src
}

// Match reports whether m matches.
func (f *Filter) Match(m *Message) bool {
	if f == nil {
		return true
	}
	return f.root.eval(&evalCtx{m: m}).truth()
}

// Select returns the messages f matches.
func (f *Filter) Select(msgs []*Message) []*Message {
	if f == nil {
		return msgs
	}
	var out []*Message
	for _, m := range msgs {
		if f.Match(m) {
			out = append(out, m)
		}
	}
	return out
}

// ParseFilter compiles a filter expression ("" is nil: match everything).
func ParseFilter(src string) (*Filter, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	toks, err := lex(src)
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	p := &parser{toks: toks}
	n, err := p.or()
	if err == nil && p.peek().kind != tEOF {
		err = fmt.Errorf("unexpected %s", p.peek())
	}
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", src, err)
	}
	return &Filter{src: src, root: n}, nil
}

// --- values ---

type vkind int

const (
	vMissing vkind = iota
	vString
	vNumber
	vBool
	vNull
	vJSON // an object or array, kept as compact JSON text
)

type value struct {
	kind vkind
	s    string // string, number text, JSON text
	b    bool
}

func (v value) truth() bool { return v.kind == vBool && v.b }

func (v value) text() string {
	switch v.kind {
	case vBool:
		return strconv.FormatBool(v.b)
	case vNull:
		return "null"
	}
	return v.s
}

func (v value) number() (float64, bool) {
	if v.kind != vString && v.kind != vNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v.s), 64)
	return f, err == nil
}

func boolean(b bool) value { return value{kind: vBool, b: b} }

func fromJSON(raw json.RawMessage) value {
	var x any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if d.Decode(&x) != nil {
		return value{}
	}
	switch t := x.(type) {
	case nil:
		return value{kind: vNull}
	case string:
		return value{kind: vString, s: t}
	case json.Number:
		return value{kind: vNumber, s: t.String()}
	case bool:
		return boolean(t)
	}
	b, _ := json.Marshal(x)
	return value{kind: vJSON, s: string(b)}
}

// --- evaluation ---

type evalCtx struct {
	m            *Message
	body, inner  *json.RawMessage
	bodyOK, inOK bool
}

func (e *evalCtx) json(inner bool) (json.RawMessage, bool) {
	if inner {
		if e.inner == nil {
			raw := json.RawMessage(payload(e.m.Body))
			e.inner, e.inOK = &raw, json.Valid(raw)
		}
		return *e.inner, e.inOK
	}
	if e.body == nil {
		raw := json.RawMessage(e.m.Body)
		e.body, e.bodyOK = &raw, json.Valid(raw)
	}
	return *e.body, e.bodyOK
}

type node interface {
	eval(e *evalCtx) value
}

type (
	orNode  struct{ l, r node }
	andNode struct{ l, r node }
	notNode struct{ x node }
	hasNode struct{ x node }
	litNode struct{ v value }
	cmpNode struct {
		op   string
		l, r node
	}
	callNode struct {
		method string
		x, arg node
		re     *regexp.Regexp
	}
	// refNode is an operand: body, attr.X, sys.X, json.path, inner.path or
	// a bare name.
	refNode struct {
		root string
		path []any // string keys and int indexes
	}
)

func (n orNode) eval(e *evalCtx) value  { return boolean(n.l.eval(e).truth() || n.r.eval(e).truth()) }
func (n andNode) eval(e *evalCtx) value { return boolean(n.l.eval(e).truth() && n.r.eval(e).truth()) }
func (n notNode) eval(e *evalCtx) value { return boolean(!n.x.eval(e).truth()) }
func (n hasNode) eval(e *evalCtx) value { return boolean(n.x.eval(e).kind != vMissing) }
func (n litNode) eval(*evalCtx) value   { return n.v }

func (n cmpNode) eval(e *evalCtx) value {
	l, r := n.l.eval(e), n.r.eval(e)
	switch n.op {
	case "==":
		return boolean(equal(l, r))
	case "!=":
		return boolean(!equal(l, r))
	}
	a, ok1 := l.number()
	b, ok2 := r.number()
	if !ok1 || !ok2 {
		return boolean(false)
	}
	switch n.op {
	case "<":
		return boolean(a < b)
	case "<=":
		return boolean(a <= b)
	case ">":
		return boolean(a > b)
	}
	return boolean(a >= b)
}

// equal compares an operand with a literal (or another operand): numbers
// numerically, booleans and null by kind, everything else as text.
func equal(l, r value) bool {
	if l.kind == vMissing || r.kind == vMissing {
		return l.kind == r.kind
	}
	if r.kind == vNumber || l.kind == vNumber {
		a, ok1 := l.number()
		b, ok2 := r.number()
		if ok1 && ok2 {
			return a == b
		}
	}
	if r.kind == vNull || l.kind == vNull {
		return l.kind == r.kind
	}
	return l.text() == r.text()
}

func (n callNode) eval(e *evalCtx) value {
	x := n.x.eval(e)
	if x.kind == vMissing {
		return boolean(false)
	}
	s, arg := x.text(), n.arg.eval(e).text()
	switch n.method {
	case "contains":
		return boolean(strings.Contains(s, arg))
	case "startsWith":
		return boolean(strings.HasPrefix(s, arg))
	case "endsWith":
		return boolean(strings.HasSuffix(s, arg))
	}
	return boolean(n.re.MatchString(s))
}

func (n refNode) eval(e *evalCtx) value {
	m := e.m
	switch n.root {
	case "body":
		return value{kind: vString, s: m.Body}
	case "attr":
		v, ok := m.MessageAttributes[n.path[0].(string)]
		if !ok {
			return value{}
		}
		if v.BinaryValue != nil {
			return value{kind: vString, s: string(v.BinaryValue)}
		}
		return value{kind: vString, s: aws.ToString(v.StringValue)}
	case "sys":
		v, ok := m.Attributes[n.path[0].(string)]
		if !ok {
			return value{}
		}
		return value{kind: vString, s: v}
	case "json", "inner":
		raw, ok := e.json(n.root == "inner")
		if !ok {
			return value{}
		}
		return walk(raw, n.path)
	}
	// A bare name: an attribute, else a member of the payload.
	if _, ok := m.MessageAttributes[n.root]; ok {
		return refNode{root: "attr", path: []any{n.root}}.eval(e)
	}
	return refNode{root: "inner", path: []any{n.root}}.eval(e)
}

// walk follows path into raw JSON. A step into a string that holds a JSON
// object or array decodes it first, so a path sees through double encoding:
// json.Message.caseId in an SNS envelope, inner.eventDetail.retry_count
// when eventDetail is itself a JSON string.
func walk(raw json.RawMessage, path []any) value {
	for _, p := range path {
		raw = decodeNested(raw)
		switch k := p.(type) {
		case string:
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) != nil {
				return value{}
			}
			next, ok := obj[k]
			if !ok {
				return value{}
			}
			raw = next
		case int:
			var arr []json.RawMessage
			if json.Unmarshal(raw, &arr) != nil || k < 0 || k >= len(arr) {
				return value{}
			}
			raw = arr[k]
		}
	}
	return fromJSON(raw)
}

// decodeNested returns the JSON a JSON string holds when it holds an object
// or an array, and raw itself otherwise.
func decodeNested(raw json.RawMessage) json.RawMessage {
	t := strings.TrimSpace(string(raw))
	if !strings.HasPrefix(t, `"`) {
		return raw
	}
	var s string
	if json.Unmarshal([]byte(t), &s) != nil {
		return raw
	}
	if in := strings.TrimSpace(s); (strings.HasPrefix(in, "{") || strings.HasPrefix(in, "[")) && json.Valid([]byte(in)) {
		return json.RawMessage(in)
	}
	return raw
}

// --- lexer ---

type tkind int

const (
	tEOF tkind = iota
	tIdent
	tString
	tNumber
	tOp // == != = < <= > >= && || ! ( ) . [ ] ,
)

type token struct {
	kind tkind
	s    string
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return fmt.Sprintf("string %q at %d", t.s, t.pos)
	}
	return fmt.Sprintf("%q at %d", t.s, t.pos)
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func lex(src string) ([]token, error) {
	var toks []token
	rs := []rune(src)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case isIdentStart(r):
			j := i
			for j < len(rs) && isIdentPart(rs[j]) {
				j++
			}
			toks = append(toks, token{tIdent, string(rs[i:j]), i})
			i = j
		case unicode.IsDigit(r) || (r == '-' && i+1 < len(rs) && unicode.IsDigit(rs[i+1])):
			j := i + 1
			for j < len(rs) && (unicode.IsDigit(rs[j]) || rs[j] == '.' || rs[j] == 'e' || rs[j] == 'E') {
				j++
			}
			if _, err := strconv.ParseFloat(string(rs[i:j]), 64); err != nil {
				return nil, fmt.Errorf("bad number %q at %d", string(rs[i:j]), i)
			}
			toks = append(toks, token{tNumber, string(rs[i:j]), i})
			i = j
		case r == '"' || r == '\'':
			j := i + 1
			var sb strings.Builder
			for ; j < len(rs) && rs[j] != r; j++ {
				if rs[j] == '\\' && j+1 < len(rs) {
					j++
					switch rs[j] {
					case 'n':
						sb.WriteRune('\n')
					case 't':
						sb.WriteRune('\t')
					default:
						sb.WriteRune(rs[j])
					}
					continue
				}
				sb.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			toks = append(toks, token{tString, sb.String(), i})
			i = j + 1
		default:
			two := ""
			if i+1 < len(rs) {
				two = string(rs[i : i+2])
			}
			switch two {
			case "==", "!=", "<=", ">=", "&&", "||":
				toks = append(toks, token{tOp, two, i})
				i += 2
				continue
			}
			if strings.ContainsRune("=<>!().[],", r) {
				toks = append(toks, token{tOp, string(r), i})
				i++
				continue
			}
			return nil, fmt.Errorf("unexpected %q at %d", r, i)
		}
	}
	return append(toks, token{kind: tEOF, pos: len(rs)}), nil
}

// --- parser ---

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}
func (p *parser) isOp(s string) bool { t := p.peek(); return t.kind == tOp && t.s == s }
func (p *parser) expect(s string) error {
	if !p.isOp(s) {
		return fmt.Errorf("expected %q, found %s", s, p.peek())
	}
	p.next()
	return nil
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	for err == nil && p.isOp("||") {
		p.next()
		var r node
		if r, err = p.and(); err == nil {
			l = orNode{l, r}
		}
	}
	return l, err
}

func (p *parser) and() (node, error) {
	l, err := p.unary()
	for err == nil && p.isOp("&&") {
		p.next()
		var r node
		if r, err = p.unary(); err == nil {
			l = andNode{l, r}
		}
	}
	return l, err
}

func (p *parser) unary() (node, error) {
	switch {
	case p.isOp("!"):
		p.next()
		x, err := p.unary()
		return notNode{x}, err
	case p.isOp("("):
		p.next()
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		return x, p.expect(")")
	}
	return p.comparison()
}

func (p *parser) comparison() (node, error) {
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind != tOp {
		return l, nil
	}
	switch t.s {
	case "==", "!=", "=", "<", "<=", ">", ">=":
		p.next()
		r, err := p.literal()
		if err != nil {
			return nil, err
		}
		op := t.s
		if op == "=" {
			op = "=="
		}
		return cmpNode{op: op, l: l, r: r}, nil
	}
	return l, nil
}

// literal reads the right side of a comparison.
func (p *parser) literal() (node, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return litNode{value{kind: vString, s: t.s}}, nil
	case tNumber:
		return litNode{value{kind: vNumber, s: t.s}}, nil
	case tIdent:
		switch t.s {
		case "true", "false":
			return litNode{boolean(t.s == "true")}, nil
		case "null":
			return litNode{value{kind: vNull}}, nil
		}
		return litNode{value{kind: vString, s: t.s}}, nil // a bare word
	}
	return nil, fmt.Errorf("expected a value, found %s", t)
}

var methods = map[string]bool{"contains": true, "startsWith": true, "endsWith": true, "matches": true}

// operand reads has(X), a reference, and any method call on it.
func (p *parser) operand() (node, error) {
	t := p.next()
	if t.kind != tIdent {
		return nil, fmt.Errorf("expected a name (body, attr.X, sys.X, json.X, inner.X), found %s", t)
	}
	if t.s == "has" && p.isOp("(") {
		p.next()
		x, err := p.operand()
		if err != nil {
			return nil, err
		}
		return hasNode{x}, p.expect(")")
	}
	if t.s == "true" || t.s == "false" {
		return litNode{boolean(t.s == "true")}, nil
	}
	ref := refNode{root: t.s}
	for {
		if p.isOp("[") {
			p.next()
			k := p.next()
			switch k.kind {
			case tString:
				ref.path = append(ref.path, k.s)
			case tNumber:
				n, err := strconv.Atoi(k.s)
				if err != nil {
					return nil, fmt.Errorf("bad index %s", k)
				}
				ref.path = append(ref.path, n)
			default:
				return nil, fmt.Errorf("expected a string or an index, found %s", k)
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			continue
		}
		if !p.isOp(".") {
			break
		}
		p.next()
		name := p.next()
		if name.kind != tIdent {
			return nil, fmt.Errorf("expected a name after '.', found %s", name)
		}
		if p.isOp("(") && methods[name.s] {
			return p.call(ref, name.s)
		}
		ref.path = append(ref.path, name.s)
	}
	return ref, checkRef(ref)
}

func checkRef(ref refNode) error {
	switch ref.root {
	case "body":
		if len(ref.path) > 0 {
			return fmt.Errorf("body has no members: use json.%v", ref.path[0])
		}
	case "attr", "sys":
		if len(ref.path) != 1 {
			return fmt.Errorf("%s needs exactly one name: %s.NAME or %s[\"NAME\"]", ref.root, ref.root, ref.root)
		}
		if _, ok := ref.path[0].(string); !ok {
			return fmt.Errorf("%s needs a name, not an index", ref.root)
		}
	case "json", "inner":
	default:
		if len(ref.path) > 0 {
			return fmt.Errorf("unknown name %q: start with body, attr, sys, json or inner", ref.root)
		}
	}
	return nil
}

func (p *parser) call(x refNode, method string) (node, error) {
	if err := checkRef(x); err != nil {
		return nil, err
	}
	p.next() // (
	arg := p.next()
	if arg.kind != tString {
		return nil, fmt.Errorf("%s() takes a string, found %s", method, arg)
	}
	n := callNode{method: method, x: x, arg: litNode{value{kind: vString, s: arg.s}}}
	if method == "matches" {
		re, err := regexp.Compile(arg.s)
		if err != nil {
			return nil, fmt.Errorf("matches(): %w", err)
		}
		n.re = re
	}
	return n, p.expect(")")
}
