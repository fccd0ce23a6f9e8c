package sqs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fastInputs are the inputs with a fast path, each with a way to make a
// fresh one.
var fastInputs = map[string]func() fastDecoder{
	"SendMessage":        func() fastDecoder { return new(sendMessageInput) },
	"SendMessageBatch":   func() fastDecoder { return new(sendMessageBatchInput) },
	"DeleteMessageBatch": func() fastDecoder { return new(deleteMessageBatchInput) },
}

// checkFast decodes body with the fast path and with encoding/json: where
// the fast path succeeds, encoding/json must succeed with the same result.
// It returns whether the fast path took the body.
func checkFast(t *testing.T, body []byte) bool {
	took := false
	for name, fresh := range fastInputs {
		fast := fresh()
		if !fast.decodeFast(body) {
			continue
		}
		took = true
		slow := fresh()
		if err := json.Unmarshal(body, slow); err != nil {
			t.Fatalf("%s: the fast path took %q, which encoding/json refuses: %v", name, body, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s: %q decodes to\n%+v\nbut encoding/json gives\n%+v", name, body, fast, slow)
		}
	}
	return took
}

func TestFastDecodeAgreesWithEncodingJSON(t *testing.T) {
	taken := []string{
		`{"QueueUrl":"http://h/000000000000/q","MessageBody":"hello"}`,
		` { "QueueUrl" : "q" , "MessageBody" : "x y" , "DelaySeconds" : 0 , "MessageGroupId":"g","MessageDeduplicationId":"d" } `,
		`{"QueueUrl":"q","MessageBody":"a","MessageBody":"b","DelaySeconds":900}`,
		`{}`,
		`{"QueueUrl":"q","Entries":[]}`,
		`{"QueueUrl":"q","Entries":[{"Id":"0","MessageBody":"a"},{"Id":"1","MessageBody":"b","DelaySeconds":5}]}`,
		`{"Entries":[{"Id":"0","ReceiptHandle":"AQEB-_x"}],"QueueUrl":"q"}`,
	}
	for _, b := range taken {
		if !checkFast(t, []byte(b)) {
			t.Errorf("the fast path gave up on %s", b)
		}
	}
	refused := []string{
		``, ` `, `null`, `[]`, `{"QueueUrl":"q"} x`, `{"QueueUrl":"q",}`, `{"QueueUrl":"q"`,
		`{"queueurl":"q"}`,                                                        // encoding/json matches keys case-insensitively
		`{"QueueUrl":"q","MessageBody":"caf\u00e9"}`,                              // escapes
		`{"QueueUrl":"q","MessageBody":"café"}`,                                   // non-ASCII
		`{"QueueUrl":"q","MessageBody":"a\tb"}`,                                   // a control character
		`{"QueueUrl":"q","DelaySeconds":-1}`,                                      // left to validation, via encoding/json
		`{"QueueUrl":"q","DelaySeconds":1.5}`,                                     // a type error
		`{"QueueUrl":"q","DelaySeconds":"5"}`,                                     // a type error
		`{"QueueUrl":"q","DelaySeconds":05}`,                                      // not JSON
		`{"QueueUrl":"q","DelaySeconds":null}`,                                    // null
		`{"QueueUrl":"q","DelaySeconds":1234567890}`,                              // too long for the fast path
		`{"QueueUrl":"q","MessageAttributes":{}}`,                                 // attributes
		`{"QueueUrl":"q","Entries":null}`,                                         // null
		`{"QueueUrl":"q","Entries":[{"Id":"0"}],"Entries":[{"MessageBody":"x"}]}`, // encoding/json merges
		`{"QueueUrl":"q","Entries":[1]}`, `{"QueueUrl":"q","Entries":[{"Id":0}]}`,
		`{"QueueUrl":"q","Unknown":1}`,
	}
	for _, b := range refused {
		if checkFast(t, []byte(b)) {
			t.Errorf("the fast path took %s", b)
		}
	}
}

// FuzzFastDecode: wherever the fast path succeeds, encoding/json agrees.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{
		`{"QueueUrl":"q","MessageBody":"hello","DelaySeconds":3}`,
		`{"QueueUrl":"q","Entries":[{"Id":"0","MessageBody":"a","MessageGroupId":"g"}]}`,
		`{"QueueUrl":"q","Entries":[{"Id":"0","ReceiptHandle":"h"}]}`,
		`{"QueueUrl":"q","DelaySeconds":05}`,
		strings.Repeat(" ", 3) + `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkFast(t, body) })
}
