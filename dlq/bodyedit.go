package dlq

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// BodyEditHelp documents --body-set (shown by --help).
const BodyEditHelp = `--body-set changes the JSON body before it is sent, for consumers that keep
their redrive markers in the message itself (repeatable; applied in order):

  --body-set PATH=VALUE    set a member (added at the end of its object if absent)
  --body-set PATH+=N       add N to a number member (absent or null counts as 0;
                           a number kept in a string stays a string)

PATH is a filter path: json.a.b[0].c (the body) or inner.a.b (the SNS-unwrapped
message: json.Message.a.b when the body is an envelope, else the body). A path
goes through members that are JSON strings holding JSON: each such level is
decoded, changed and encoded back as a string, so a double (or triple) encoding
stays as it was. Other members, their order and their spacing are kept.
VALUE is JSON (true, 0, "text", {"a":1}, null); anything else is a string,
except what looks like a number JSON does not write (+1, 01, .5): that is
refused, since PATH=+1 most likely meant PATH+=1.
A message whose body does not have the path (or is not JSON) is not redriven,
and is named with the reason. Editing an SNS notification invalidates its
signature.

Example: a body {"Message": "<json>"} whose eventDetail is a JSON string again,
marked the way the consumer expects after a redrive:
  --body-set inner.dlq_redriven=true
  --body-set inner.eventDetail.retry_count=0
  --body-set inner.eventDetail.dlq_redrive_count+=1
  --body-set inner.eventDetail.dlq_final_pass=false`

// BodyEdit is one change a redrive makes to a message's JSON body.
type BodyEdit struct {
	src   string
	inner bool  // the path starts at the SNS-unwrapped message
	path  []any // string keys and int indexes
	incr  bool
	// value is the JSON to set, or the number to add.
	value string
}

// String returns the edit as given.
func (b *BodyEdit) String() string { return b.src }

// pathString is the edit's path as given (without the operator).
func (b *BodyEdit) pathString() string {
	p := b.src[:operatorIndex(b.src)]
	return strings.TrimSpace(strings.TrimSuffix(p, "+"))
}

// ParseBodyEdit parses PATH=VALUE or PATH+=N.
func ParseBodyEdit(s string) (*BodyEdit, error) {
	b := &BodyEdit{src: s}
	op := operatorIndex(s)
	if op < 0 {
		return nil, fmt.Errorf("--body-set %q: expected PATH=VALUE or PATH+=N", s)
	}
	path, value := s[:op], s[op+1:]
	if strings.HasSuffix(path, "+") {
		b.incr, path = true, path[:len(path)-1]
	}
	toks, err := lex(path)
	if err != nil {
		return nil, fmt.Errorf("--body-set %q: %w", s, err)
	}
	p := &parser{toks: toks}
	n, err := p.operand()
	ref, ok := n.(refNode)
	switch {
	case err != nil:
	case !ok || (ref.root != "json" && ref.root != "inner") || len(ref.path) == 0:
		err = errors.New("the path must start with json. or inner. and name a member")
	case p.peek().kind != tEOF:
		err = fmt.Errorf("unexpected %s in the path", p.peek())
	}
	if err != nil {
		return nil, fmt.Errorf("--body-set %q: %w", s, err)
	}
	b.inner, b.path = ref.root == "inner", ref.path
	value = strings.TrimSpace(value)
	switch {
	case strings.HasPrefix(value, "="):
		return nil, fmt.Errorf("--body-set %q: use one = (PATH=VALUE)", s)
	case b.incr:
		if _, err := strconv.ParseFloat(value, 64); err != nil || !json.Valid([]byte(value)) {
			return nil, fmt.Errorf("--body-set %q: += needs a number", s)
		}
		b.value = value
	case json.Valid([]byte(value)):
		b.value = value
	case looksNumeric(value):
		// "+1", "01", ".5": a number JSON does not write. Taken as a
		// string it would silently set "+1"; most likely += was meant.
		name := s[:op]
		return nil, fmt.Errorf("--body-set %q: %s is not a JSON number: to add to the member write %s+=%s; to set a number write it as JSON (%s=%s); to set the string, quote it: %s='\"%s\"'",
			s, value, name, strings.TrimPrefix(value, "+"), name, jsonNumberOf(value), name, value)
	default:
		b.value = quoteJSON(value, false)
	}
	return b, nil
}

// operatorIndex is the index of the first '=' outside a quoted key.
func operatorIndex(s string) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '=':
			return i
		}
	}
	return -1
}

// Apply returns body with the edit made, and the member's value before and
// after it ("" before when the member was absent).
func (b *BodyEdit) Apply(body string) (out, before, after string, err error) {
	if !json.Valid([]byte(body)) {
		return "", "", "", errors.New("the body is not JSON")
	}
	path := b.path
	if b.inner {
		if _, ok := Unwrap(body); ok {
			path = append([]any{"Message"}, path...)
		}
	}
	set := func(old string, present bool) (string, error) {
		if present {
			before = old
		}
		if !b.incr {
			after = b.value
			return b.value, nil
		}
		after, err = add(old, present, b.value)
		return after, err
	}
	lead, text, trail := splitSpace(body)
	text, err = editValue(text, path, "", isASCII(text), set)
	if err != nil {
		return "", "", "", err
	}
	return lead + text + trail, before, after, nil
}

// add adds n to the number old (absent or null: 0). A number held in a
// string stays in a string.
func add(old string, present bool, n string) (string, error) {
	base, quoted := "0", false
	if present && old != "null" {
		base = old
		if strings.HasPrefix(old, `"`) {
			var s string
			if json.Unmarshal([]byte(old), &s) != nil {
				return "", fmt.Errorf("%s is not a number", old)
			}
			base, quoted = strings.TrimSpace(s), true
		}
		if _, err := strconv.ParseFloat(base, 64); err != nil || !json.Valid([]byte(base)) {
			return "", fmt.Errorf("%s is not a number", old)
		}
	}
	var sum string
	x, err1 := strconv.ParseInt(base, 10, 64)
	y, err2 := strconv.ParseInt(n, 10, 64)
	if r := x + y; err1 == nil && err2 == nil && (r > x) == (y > 0) {
		sum = strconv.FormatInt(r, 10)
	} else {
		fx, _ := strconv.ParseFloat(base, 64)
		fy, _ := strconv.ParseFloat(n, 64)
		r := fx + fy
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return "", errors.New("the sum is out of range")
		}
		sum = strconv.FormatFloat(r, 'g', -1, 64)
	}
	if quoted {
		return quoteJSON(sum, false), nil
	}
	return sum, nil
}

// editValue changes the member at path inside text, a JSON value (no
// surrounding space), by splicing: every other byte stays. A string on
// the way is decoded, changed and encoded again. where names the path so
// far, for errors. ascii is true when the JSON text around is all ASCII
// (Python's ensure_ascii): what is written then escapes non-ASCII too.
func editValue(text string, path []any, where string, ascii bool, set func(old string, present bool) (string, error)) (string, error) {
	if len(path) == 0 {
		v, err := set(text, true)
		if ascii {
			v = asciiJSON(v)
		}
		return v, err
	}
	label := func() string {
		if where == "" {
			return "the body"
		}
		return where
	}
	switch text[0] {
	case '"':
		var s string
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			return "", err
		}
		lead, inner, trail := splitSpace(s)
		if inner == "" || (inner[0] != '{' && inner[0] != '[') || !json.Valid([]byte(inner)) {
			return "", fmt.Errorf("%s is a string that does not hold a JSON object", label())
		}
		changed, err := editValue(inner, path, where, isASCII(inner), set)
		if err != nil {
			return "", err
		}
		return quoteJSON(lead+changed+trail, isASCII(text)), nil
	case '{':
		key, ok := path[0].(string)
		if !ok {
			return "", fmt.Errorf("%s is an object, not an array", label())
		}
		next := joinPath(where, path[0])
		members, end := scanObject(text)
		for i := len(members) - 1; i >= 0; i-- { // the last of duplicate keys wins, as in most parsers
			m := members[i]
			if m.key != key {
				continue
			}
			changed, err := editValue(text[m.valStart:m.valEnd], path[1:], next, ascii, set)
			if err != nil {
				return "", err
			}
			return text[:m.valStart] + changed + text[m.valEnd:], nil
		}
		if len(path) > 1 {
			return "", fmt.Errorf("%s has no member %q", label(), key)
		}
		v, err := set("", false)
		if err != nil {
			return "", err
		}
		if ascii {
			v = asciiJSON(v)
		}
		return insertMember(text, members, end, quoteJSON(key, ascii), v), nil
	case '[':
		idx, ok := path[0].(int)
		if !ok {
			return "", fmt.Errorf("%s is an array, not an object", label())
		}
		elems := scanArray(text)
		if idx < 0 || idx >= len(elems) {
			return "", fmt.Errorf("%s has no element %d", label(), idx)
		}
		e := elems[idx]
		changed, err := editValue(text[e[0]:e[1]], path[1:], joinPath(where, path[0]), ascii, set)
		if err != nil {
			return "", err
		}
		return text[:e[0]] + changed + text[e[1]:], nil
	}
	return "", fmt.Errorf("%s is %s, not an object", label(), text)
}

func joinPath(where string, step any) string {
	switch k := step.(type) {
	case int:
		return fmt.Sprintf("%s[%d]", where, k)
	case string:
		if where == "" {
			return k
		}
		return where + "." + k
	}
	return where
}

// member is one member of a scanned object: byte offsets in its text.
type member struct {
	key              string
	keyStart, keyEnd int
	valStart, valEnd int
}

// scanObject lists the members of a valid JSON object and returns the
// offset of its closing brace.
func scanObject(s string) ([]member, int) {
	var out []member
	i := skipSpace(s, 1)
	if s[i] == '}' {
		return nil, i
	}
	for {
		var m member
		m.keyStart = i
		m.keyEnd = scanValue(s, i)
		_ = json.Unmarshal([]byte(s[m.keyStart:m.keyEnd]), &m.key)
		i = skipSpace(s, m.keyEnd) + 1 // the colon
		m.valStart = skipSpace(s, i)
		m.valEnd = scanValue(s, m.valStart)
		out = append(out, m)
		i = skipSpace(s, m.valEnd)
		if s[i] == '}' {
			return out, i
		}
		i = skipSpace(s, i+1) // the comma
	}
}

// scanArray lists the [start, end) offsets of a valid JSON array's elements.
func scanArray(s string) [][2]int {
	var out [][2]int
	i := skipSpace(s, 1)
	if s[i] == ']' {
		return nil
	}
	for {
		end := scanValue(s, i)
		out = append(out, [2]int{i, end})
		i = skipSpace(s, end)
		if s[i] == ']' {
			return out
		}
		i = skipSpace(s, i+1)
	}
}

// insertMember adds k: value (k quoted) after the last member, spaced like
// the object's own members ({"a": 1, "b": 2}, SNS's "a" : 1 on lines,
// compact).
func insertMember(s string, members []member, end int, k, value string) string {
	if len(members) == 0 {
		return s[:end] + k + ": " + value + s[end:]
	}
	first, last := members[0], members[len(members)-1]
	colon := s[first.keyEnd:first.valStart]
	comma := ", "
	switch {
	case len(members) > 1:
		comma = s[first.valEnd:members[1].keyStart]
	case strings.Contains(s[1:first.keyStart], "\n"):
		comma = "," + s[1:first.keyStart]
	case !strings.Contains(colon, " "):
		comma = ","
	}
	return s[:last.valEnd] + comma + k + colon + value + s[last.valEnd:]
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// scanValue returns the end of the valid JSON value that starts at i.
func scanValue(s string, i int) int {
	switch s[i] {
	case '"':
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(s)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = scanValue(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i
	for j < len(s) && !strings.ContainsRune(",]} \t\r\n", rune(s[j])) {
		j++
	}
	return j
}

// splitSpace splits s into its leading space, the rest, and trailing space.
func splitSpace(s string) (lead, text, trail string) {
	t := strings.TrimLeft(s, " \t\r\n")
	lead = s[:len(s)-len(t)]
	text = strings.TrimRight(t, " \t\r\n")
	return lead, text, t[len(text):]
}

// asciiJSON escapes the non-ASCII characters of valid JSON text (they can
// only be inside strings) as \uXXXX.
func asciiJSON(v string) string {
	if isASCII(v) {
		return v
	}
	var b strings.Builder
	for _, r := range v {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		b.WriteString(strings.Trim(quoteJSON(string(r), true), `"`))
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// quoteJSON writes s as a JSON string the way Python's json.dumps and
// SNS do: no HTML escaping, no escaped slash; with ascii, every non-ASCII
// character as \uXXXX (Python's default ensure_ascii).
func quoteJSON(s string, ascii bool) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.WriteByte('"')
	u := func(r rune) {
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hex[(r>>uint(shift))&0xf])
		}
	}
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			u(r)
		case ascii && r > 0xffff:
			r -= 0x10000
			u(0xd800 + (r >> 10))
			u(0xdc00 + (r & 0x3ff))
		case ascii && r >= utf8.RuneSelf:
			u(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// looksNumeric reports whether v reads as a number but is not JSON's
// spelling of one (+1, 01, .5, 1.): a --body-set VALUE taken for a string.
func looksNumeric(v string) bool {
	_, err := strconv.ParseFloat(v, 64)
	return err == nil && !json.Valid([]byte(v))
}

// jsonNumberOf writes a number as JSON would (+1 → 1, .5 → 0.5).
func jsonNumberOf(v string) string {
	f, _ := strconv.ParseFloat(v, 64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}
