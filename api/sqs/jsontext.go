package sqs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidemq/tidemq"
)

// encoding/json turns bytes that are not UTF-8, and escaped surrogates that
// are not half of a pair, into U+FFFD without a word, where the Query
// protocol hands them on as they came and the domain refuses them (a
// message body with them is InvalidMessageContents). This file makes JSON
// refuse them too:
//
//   - the strings the domain judges, a MessageBody and a message or system
//     attribute's StringValue, are exactStrings, decoded as sent, so that
//     the same checks refuse them with the same error, per batch entry
//     where that is how they fail;
//   - any other string that is not valid Unicode fails the whole request
//     with InvalidParameterValue (checkJSONStrings), before decoding, as
//     the Query parser does for its parameters (package awsquery).
//
// The fast path (fastjson.go) takes only printable ASCII without escapes,
// so it never sees either.

// exactString is a string member decoded as sent: bytes that are not UTF-8
// are kept, and an escaped surrogate that is not half of a pair becomes its
// three (invalid) UTF-8 bytes, as a Query client's %ED%A0%80 would. Valid
// text decodes exactly as encoding/json decodes it into a string.
type exactString string

// UnmarshalJSON implements json.Unmarshaler. encoding/json has checked the
// syntax of data (a string, or another value that is a type error).
func (s *exactString) UnmarshalJSON(data []byte) error {
	if len(data) == 0 || data[0] != '"' {
		if string(data) == "null" {
			return nil // as for a string: no change
		}
		return &json.UnmarshalTypeError{Value: jsonValueKind(data), Type: reflect.TypeFor[string]()}
	}
	*s = exactString(unquoteExact(data[1 : len(data)-1]))
	return nil
}

// jsonValueKind names a JSON value that is not a string, as
// json.UnmarshalTypeError does.
func jsonValueKind(data []byte) string {
	switch data[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	}
	return "number"
}

// unquoteExact decodes the inside of a syntactically valid JSON string.
func unquoteExact(in []byte) string {
	if bytes.IndexByte(in, '\\') < 0 {
		return string(in)
	}
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		if in[i] != '\\' {
			out = append(out, in[i])
			i++
			continue
		}
		switch c := in[i+1]; c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(in[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := lowSurrogateAt(in, i); ok && r < 0xdc00 {
					out = utf8.AppendRune(out, utf16.DecodeRune(r, r2))
					i += 6
					continue
				}
				// Kept as the three bytes UTF-8 would give it, which no
				// UTF-8 decoder accepts.
				out = append(out, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
				continue
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, c)
		}
		i += 2
	}
	return string(out)
}

// lowSurrogateAt reports the \uXXXX escape at in[i:] when it is a low
// surrogate.
func lowSurrogateAt(in []byte, i int) (rune, bool) {
	if i+6 > len(in) || in[i] != '\\' || in[i+1] != 'u' {
		return 0, false
	}
	r := hex4(in[i+2 : i+6])
	return r, r >= 0xdc00 && r <= 0xdfff
}

// hex4 decodes 4 hex digits (checked by the JSON syntax); -1 if they are not.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// validJSONString reports whether the inside of a JSON string is valid
// Unicode: UTF-8 bytes, and escaped surrogates only in pairs.
func validJSONString(in []byte) bool {
	if !utf8.Valid(in) {
		return false
	}
	for i := 0; i < len(in); i++ {
		if in[i] != '\\' {
			continue
		}
		if i+1 < len(in) && in[i+1] == 'u' && i+6 <= len(in) {
			r := hex4(in[i+2 : i+6])
			if utf16.IsSurrogate(r) {
				if _, ok := lowSurrogateAt(in, i+6); r >= 0xdc00 || !ok {
					return false
				}
				i += 6
			}
			i += 5
			continue
		}
		i++ // the escaped character
	}
	return true
}

// jsonFrame is one open object or array in checkJSONStrings's walk, with
// the object's current member name.
type jsonFrame struct {
	array bool
	key   []byte
}

// maxJSONFrames is how deep checkJSONStrings keeps track: the deepest
// string it lets through is a batch entry's attribute value,
// {"Entries":[{"MessageAttributes":{"a":{"StringValue":...}}}]}, 5 deep.
// Deeper frames are counted, not kept, so the walk takes no memory in
// proportion to the nesting (encoding/json refuses beyond 10,000 anyway).
const maxJSONFrames = 6

// checkJSONStrings returns InvalidParameterValue for the first string of a
// JSON text that is not valid Unicode, unless it is one that decodes into
// an exactString (a MessageBody, an attribute's StringValue), which the
// domain judges. It looks no further than it must: a text that is UTF-8
// and has no \u escape is valid. Syntax errors are left to encoding/json.
func checkJSONStrings(body []byte) error {
	if utf8.Valid(body) && !bytes.Contains(body, []byte(`\u`)) {
		return nil
	}
	var frames [maxJSONFrames]jsonFrame
	depth := 0
	for i := 0; i < len(body); {
		switch body[i] {
		case '{', '[':
			if depth < maxJSONFrames {
				frames[depth] = jsonFrame{array: body[i] == '['}
			}
			depth++
			i++
		case '}', ']':
			depth = max(depth-1, 0)
			i++
		case '"':
			end := jsonStringEnd(body, i)
			if end < 0 {
				return nil // unterminated: a syntax error
			}
			inside := body[i+1 : end-1]
			j := end
			for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\n' || body[j] == '\r') {
				j++
			}
			if j < len(body) && body[j] == ':' { // a member name
				if !validJSONString(inside) {
					return tidemq.Errorf(tidemq.ErrInvalidParameterValue,
						"A member name in the request is invalid. Reason: it is not valid Unicode (bytes that are not UTF-8, or an unpaired surrogate).")
				}
				if depth > 0 && depth <= maxJSONFrames {
					frames[depth-1].key = inside
				}
			} else if !validJSONString(inside) && !keptForDomainJSON(frames[:min(depth, maxJSONFrames)], depth) {
				return tidemq.Errorf(tidemq.ErrInvalidParameterValue,
					"Value for parameter %s is invalid. Reason: it is not valid Unicode (bytes that are not UTF-8, or an unpaired surrogate).",
					memberOf(frames[:min(depth, maxJSONFrames)], depth))
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

// jsonStringEnd returns the index just past the string that starts at
// body[i] ('"'), or -1 if it does not end.
func jsonStringEnd(body []byte, i int) int {
	for j := i + 1; j < len(body); j++ {
		switch body[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// keptForDomainJSON reports whether a string value at the given frames
// decodes into an exactString: a message's MessageBody, or the StringValue
// of one of its MessageAttributes or MessageSystemAttributes, where a
// message is the request object or an element of its Entries.
func keptForDomainJSON(frames []jsonFrame, depth int) bool {
	if depth != len(frames) || depth == 0 || frames[depth-1].array {
		return false
	}
	isMessage := func(d int) bool { // frames[d] is a message object
		return d == 0 || d == 2 && string(frames[0].key) == "Entries" && frames[1].array && !frames[2].array
	}
	switch string(frames[depth-1].key) {
	case "MessageBody":
		return isMessage(depth - 1)
	case "StringValue":
		if depth < 3 || frames[depth-2].array {
			return false
		}
		m := string(frames[depth-3].key)
		return (m == "MessageAttributes" || m == "MessageSystemAttributes") && isMessage(depth-3)
	}
	return false
}

// memberOf names, for an error, the member a string value belongs to: the
// innermost member name, if it is short and valid text.
func memberOf(frames []jsonFrame, depth int) string {
	for d := min(depth, len(frames)) - 1; d >= 0; d-- {
		if k := frames[d].key; !frames[d].array && k != nil {
			if len(k) <= 64 && validJSONString(k) && bytes.IndexByte(k, '\\') < 0 {
				return string(k)
			}
			break
		}
	}
	return "(a member of the request)"
}
