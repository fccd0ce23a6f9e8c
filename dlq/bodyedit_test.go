package dlq_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/dlq"
)

// seed002In and seed002Out (testdata/seed002-*.json, also read by the web
// console's tests) were written by Python's json.dumps, as seed 002's
// redrive_dlq_messages writes them: the Message and its eventDetail are
// JSON strings, non-ASCII is \u-escaped, new members come last.
var (
	seed002In  = readTestdata("seed002-in.json")
	seed002Out = readTestdata("seed002-out.json")
)

func readTestdata(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

var seed002Edits = []string{
	"inner.dlq_redriven=true",
	"inner.eventDetail.retry_count=0",
	"inner.eventDetail.dlq_redrive_count+=1",
	"inner.eventDetail.dlq_final_pass=false",
}

func applyAll(t *testing.T, body string, edits ...string) (string, error) {
	t.Helper()
	for _, s := range edits {
		e, err := dlq.ParseBodyEdit(s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		if body, _, _, err = e.Apply(body); err != nil {
			return "", err
		}
	}
	return body, nil
}

// The seed's own Python and --body-set produce the same bytes.
func TestBodyEditMatchesSeed002(t *testing.T) {
	got, err := applyAll(t, seed002In, seed002Edits...)
	if err != nil {
		t.Fatal(err)
	}
	if got != seed002Out {
		t.Errorf("got\n%s\nwant\n%s", got, seed002Out)
	}
}

func TestBodyEdit(t *testing.T) {
	sns := "{\n  \"Type\" : \"Notification\",\n  \"Message\" : \"{\\\"n\\\":1}\",\n  \"Timestamp\" : \"t\"\n}"
	for _, c := range []struct {
		body  string
		edits []string
		want  string
	}{
		{`{"a":1}`, []string{"json.b=true"}, `{"a":1,"b":true}`},
		{`{"a": 1}`, []string{"json.b=x y"}, `{"a": 1, "b": "x y"}`},
		{`{}`, []string{`json["odd.key"]=1`}, `{"odd.key": 1}`},
		{`  {"a":{"b":[1,{"c":2}]}}` + "\n", []string{"json.a.b[1].c+=40"}, `  {"a":{"b":[1,{"c":42}]}}` + "\n"},
		{`{"n":"2"}`, []string{"json.n+=1"}, `{"n":"3"}`}, // a number kept in a string stays one
		{`{"n":null,"m":1.5}`, []string{"json.n+=1", "json.m+=1"}, `{"n":1,"m":2.5}`},
		{`{"a":1,"a":2}`, []string{"json.a=3"}, `{"a":1,"a":3}`}, // the last duplicate, as parsers read it
		// No HTML escaping; non-ASCII escaped only where the text was all ASCII.
		{`{"a":"<&>"}`, []string{`json.b="<é>"`}, `{"a":"<&>","b":"<\u00e9>"}`},
		{`{"a":"ö"}`, []string{`json.b="<é>"`}, `{"a":"ö","b":"<é>"}`},
		{`{"s":"{\"x\": \"é\"}"}`, []string{"json.s.y=1"}, `{"s":"{\"x\": \"é\", \"y\": 1}"}`},
		{`{"s":"{\"x\": \"\\u00e9\"}"}`, []string{`json.s.y="ü"`}, `{"s":"{\"x\": \"\\u00e9\", \"y\": \"\\u00fc\"}"}`},
		{`{"o":{"k":1}}`, []string{`json.o={"z": 1, "a": [2]}`}, `{"o":{"z": 1, "a": [2]}}`},
		// SNS spacing, and inner. reaching into the notification's Message.
		{sns, []string{"inner.m=2"}, strings.Replace(sns, `{\"n\":1}`, `{\"n\":1,\"m\":2}`, 1)},
		{sns, []string{"json.Extra=1"}, strings.Replace(sns, "\"t\"\n}", "\"t\",\n  \"Extra\" : 1\n}", 1)},
		// inner. on a body that is no envelope is the body.
		{`{"a":1}`, []string{"inner.a=2"}, `{"a":2}`},
	} {
		got, err := applyAll(t, c.body, c.edits...)
		if err != nil || got != c.want {
			t.Errorf("%s with %q:\n got %s (%v)\nwant %s", c.body, c.edits, got, err, c.want)
		}
	}
	for _, c := range []struct{ body, edit, err string }{
		{`not json`, "json.a=1", "the body is not JSON"},
		{`{"a":1}`, "json.b.c=1", `the body has no member "b"`},
		{`{"a":"plain"}`, "json.a.b=1", "a is a string that does not hold a JSON object"},
		{`{"a":""}`, "json.a.b=1", "a is a string that does not hold a JSON object"},
		{`{"a":[1]}`, "json.a[3]=1", "a has no element 3"},
		{`{"a":[1]}`, "json.a.b=1", "a is an array, not an object"},
		{`{"a":5}`, "json.a.b=1", "a is 5, not an object"},
		{`{"a":"x"}`, "json.a+=1", `"x" is not a number`},
		{`[1]`, "json.a=1", "the body is an array, not an object"},
	} {
		_, err := applyAll(t, c.body, c.edit)
		if err == nil || err.Error() != c.err {
			t.Errorf("%s with %q: error %v, want %q", c.body, c.edit, err, c.err)
		}
	}
	for _, s := range []string{"x=1", "json.a", "json=1", "json.a==1", "json.a+=x", "body.x=1", "attr.x=1", "json.a.contains(\"x\")=1", "json.a b=1"} {
		if _, err := dlq.ParseBodyEdit(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

// TestBodySetRefusesNumbersJSONDoesNotWrite: --body-set x=+1 silently set
// the string "+1" (it is not JSON, and anything else is a string); it most
// likely meant x+=1. It is refused, saying what to write instead.
func TestBodySetRefusesNumbersJSONDoesNotWrite(t *testing.T) {
	for _, s := range []string{"inner.retry_count=+1", "json.a=01", "json.a=.5", "json.a=1."} {
		_, err := dlq.ParseBodyEdit(s)
		if err == nil || !strings.Contains(err.Error(), "is not a JSON number") {
			t.Errorf("%s: %v", s, err)
		}
	}
	_, err := dlq.ParseBodyEdit("inner.retry_count=+1")
	if err == nil || !strings.Contains(err.Error(), "inner.retry_count+=1") || !strings.Contains(err.Error(), "(inner.retry_count=1)") {
		t.Errorf("the hint: %v", err)
	}
	for _, s := range []string{`inner.a="+1"`, "inner.a=1", "inner.a=-1", "inner.a=text", "inner.a+=+1"} {
		if _, err := dlq.ParseBodyEdit(s); err != nil && s != "inner.a+=+1" {
			t.Errorf("%s: %v", s, err)
		}
	}
}
