package awsquery

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
)

var plain = &Service{}

func parseForm(t *testing.T, s *Service, form string) (*Node, error) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	return s.Parse(r, []byte(form))
}

func TestParseSources(t *testing.T) {
	// A GET carries everything in the query string; a POST may carry some
	// of it in the URL too, and the body wins for a key given in both.
	r := httptest.NewRequest(http.MethodPost, "/000000000000/q?Action=SendMessage&MessageBody=url&DelaySeconds=3",
		strings.NewReader("MessageBody=body&MessageBody=again"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	n, err := plain.Parse(r, []byte("MessageBody=body&MessageBody=again"))
	if err != nil {
		t.Fatal(err)
	}
	if n.Str("Action") != "SendMessage" || n.Str("MessageBody") != "body" || n.Str("DelaySeconds") != "3" {
		t.Errorf("merged params: Action=%q MessageBody=%q DelaySeconds=%q", n.Str("Action"), n.Str("MessageBody"), n.Str("DelaySeconds"))
	}
	// A body that is not a form (e.g. JSON without X-Amz-Target) is not read as one.
	r = httptest.NewRequest(http.MethodPost, "/?Action=ListQueues", strings.NewReader("{}"))
	r.Header.Set("Content-Type", "application/json")
	n, err = plain.Parse(r, []byte("{}"))
	if err != nil || n.Str("Action") != "ListQueues" || n.Has("{}") || len(n.params) != 1 {
		t.Errorf("non-form body: %v %v", err, n.params)
	}
}

func TestNodeListsAndMaps(t *testing.T) {
	n, err := parseForm(t, plain, "Attribute.2.Name=b&Attribute.2.Value=2&Attribute.1.Name=a&Attribute.1.Value=1"+
		"&Tags.member.1.Key=k&Tags.member.1.Value=v&Attributes.entry.1.key=x&Attributes.entry.1.value=y"+
		"&L.3=c&L.1=a&L.x=no&L.0=no&L.%2B2=no&L.10=d&L=own"+
		// An item's parameters need not be adjacent once sorted; "01" is
		// an item of its own, before "1".
		"&E.1=v&E.1-=w&E.1.Id=a&E.01.Id=b")
	if err != nil {
		t.Fatal(err)
	}
	if got := n.StrMap("Attribute", "Name", "Value"); !reflect.DeepEqual(got, map[string]string{"a": "1", "b": "2"}) {
		t.Errorf("flattened map: %v", got)
	}
	if got := n.Child("Tags").StrMap("member", "Key", "Value"); !reflect.DeepEqual(got, map[string]string{"k": "v"}) {
		t.Errorf("member map: %v", got)
	}
	if got := n.Child("Attributes").StrMap("entry", "key", "value"); !reflect.DeepEqual(got, map[string]string{"x": "y"}) {
		t.Errorf("entry map: %v", got)
	}
	if got := n.StrList("L"); !reflect.DeepEqual(got, []string{"a", "c", "d"}) {
		t.Errorf("list: %v", got)
	}
	if n.Str("L") != "own" || n.Child("L").Value() != "own" {
		t.Errorf("a list node's own value: %q", n.Str("L"))
	}
	var ids []string
	for _, it := range n.Items("E") {
		ids = append(ids, it.Str("Id"))
	}
	if !reflect.DeepEqual(ids, []string{"b", "a"}) {
		t.Errorf("items: %v", ids)
	}
	var none *Node
	if none.Child("a") != nil || none.Str("a") != "" || none.Has("a") || none.Items("a") != nil ||
		none.StrList("a") != nil || none.StrMap("a", "k", "v") != nil || n.Child("nope") != nil {
		t.Error("an absent node is not empty")
	}
}

func TestParseRefuses(t *testing.T) {
	snsLike := &Service{
		KeepValue: func(name string) bool { return name == "Message" },
		InvalidParameter: func(name, reason string) *tidemq.Error {
			return tidemq.Errorf(tidemq.ErrSNSInvalidParameter, "Invalid parameter: %s Reason: %s", name, reason)
		},
	}
	tests := []struct {
		s    *Service
		form string
		code *tidemq.ErrorCode
		msg  string
	}{
		{plain, "a=%zz", tidemq.ErrMalformedInput, `The request body is not a valid form: invalid URL escape "%zz"`},
		{plain, "a=1;b=2", tidemq.ErrMalformedInput, "The request body is not a valid form: invalid semicolon separator"},
		{plain, strings.Repeat("a=&", MaxParams) + "a=", tidemq.ErrInvalidQueryParameter, "The request has more than 2000 parameters."},
		{plain, strings.Repeat("n", MaxParamNameLength+1) + "=x", tidemq.ErrInvalidQueryParameter, "A parameter name is longer than the limit of 256 bytes."},
		{plain, strings.Repeat("%6E", MaxParamNameLength+1) + "=x", tidemq.ErrInvalidQueryParameter, "A parameter name is longer than the limit of 256 bytes."},
		{plain, "a" + strings.Repeat("%2Ea", MaxParamDepth) + "=x", tidemq.ErrInvalidQueryParameter,
			"The parameter name a" + strings.Repeat(".a", MaxParamDepth) + " has 17 dot-separated parts; at most 16 are allowed."},
		{plain, "%FF=x", tidemq.ErrInvalidParameterValue, "A parameter name is invalid. Reason: it is not valid UTF-8."},
		{plain, "Subject=%FF", tidemq.ErrInvalidParameterValue, "Value for parameter Subject is invalid. Reason: it is not valid UTF-8."},
		{plain, "Message=%FF", tidemq.ErrInvalidParameterValue, "Value for parameter Message is invalid. Reason: it is not valid UTF-8."},
		{snsLike, "Subject=%FF", tidemq.ErrSNSInvalidParameter, "Invalid parameter: Subject Reason: it is not valid UTF-8."},
	}
	for _, tt := range tests {
		_, err := parseForm(t, tt.s, tt.form)
		if e, ok := err.(*tidemq.Error); !ok || e.Code != tt.code || e.Message != tt.msg {
			t.Errorf("%.60s: got %v, want %s: %s", tt.form, err, tt.code.Code, tt.msg)
		}
	}
	// At the bounds, and a kept value.
	for _, form := range []string{
		strings.Repeat("a=&", MaxParams-1) + "a=",
		strings.Repeat("n", MaxParamNameLength) + "=x",
		"a" + strings.Repeat(".a", MaxParamDepth-1) + "=x",
	} {
		if _, err := parseForm(t, plain, form); err != nil {
			t.Errorf("%.60s: %v", form, err)
		}
	}
	if n, err := parseForm(t, snsLike, "Message=%FF"); err != nil || n.Str("Message") != "\xff" {
		t.Errorf("a kept value: %v", err)
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		form, want string
		ok         bool
	}{
		{"Action=Publish&TopicArn=x", "Publish", true},
		{"a=%zz&b;c&%41ction=Publish+now&Action=Later", "Publish now", true},
		{strings.Repeat("a.", 1000) + "=x&Action=ListTopics", "ListTopics", true},
		{"Actions=x&action=y&Action", "", true},
		{"Action=%zz", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got, ok := Lookup(tt.form, "Action"); got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%.40q) = %q %v, want %q %v", tt.form, got, ok, tt.want, tt.ok)
		}
	}
}
