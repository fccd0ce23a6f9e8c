package sqs

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidemq/tidemq"
)

// FuzzExactString: an exactString decodes valid text as encoding/json
// decodes a string, and keeps text that is not valid Unicode invalid (so
// that the domain refuses it) where encoding/json makes it valid.
func FuzzExactString(f *testing.F) {
	for _, s := range []string{
		`"hello"`, `"caf\u00e9 \ud83d\ude00 \n\t\"\\\/"`, `"\ud800"`, `"\udc00\ud800"`, `"\ud800\u0041"`,
		"\"a\xffb\"", `"\u0000"`, `"\ud83d\ude00\ud83d"`, `5`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, token []byte) {
		var want string
		if json.Unmarshal(token, &want) != nil || len(token) == 0 || token[0] != '"' {
			return
		}
		var got exactString
		if err := json.Unmarshal(token, &got); err != nil {
			t.Fatalf("%q: %v", token, err)
		}
		inside := token[1 : len(token)-1]
		if validJSONString(inside) {
			if string(got) != want {
				t.Fatalf("%q: exactString %q, encoding/json %q", token, got, want)
			}
			return
		}
		if utf8.ValidString(string(got)) {
			t.Fatalf("%q is not valid Unicode, but decodes to valid UTF-8 %q", token, got)
		}
	})
}

func TestExactStringTypeErrors(t *testing.T) {
	var in sendMessageBatchInput
	err := decodeJSON([]byte(`{"Entries":[{"Id":"a","MessageBody":5}]}`), &in)
	// As for a string member: the member's path and what was found.
	if !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) || !strings.Contains(err.Error(), "MessageBody is invalid") ||
		!strings.HasSuffix(err.Error(), "Reason: expected a string, found a JSON number.") {
		t.Errorf("a number for MessageBody: %v", err)
	}
	in = sendMessageBatchInput{}
	if err := decodeJSON([]byte(`{"Entries":[{"Id":"a","MessageBody":null}]}`), &in); err != nil || in.Entries[0].MessageBody != "" {
		t.Errorf("null for MessageBody: %v %+v", err, in)
	}
}
