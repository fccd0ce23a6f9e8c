package sns

import (
	"strings"
	"testing"
)

// The rules of AWS's filter-policy documentation, on its own example
// message (a customer transaction): as message attributes, and as a
// message body for the MessageBody scope.
var awsExampleAttributes = map[string]Attribute{
	"customer_interests": {DataType: "String.Array", StringValue: `["soccer", "rugby", "hockey"]`},
	"store":              {DataType: "String", StringValue: "example_corp"},
	"event":              {DataType: "String", StringValue: "order_placed"},
	"price_usd":          {DataType: "Number", StringValue: "210.75"},
}

const awsExampleBody = `{"customer_interests": ["soccer", "rugby", "hockey"], "store": "example_corp", "event": "order_placed", "price_usd": 210.75}`

func TestFilterPolicyAWSExamples(t *testing.T) {
	cases := []struct {
		policy string
		want   bool
	}{
		// The documentation's accepting and rejecting policies.
		{`{"store":["example_corp"],"event":[{"anything-but":"order_cancelled"}],"customer_interests":["rugby","football","baseball"],"price_usd":[{"numeric":[">=",100]}]}`, true},
		{`{"store":["example_corp"],"event":["order_cancelled"],"encrypted":[false],"customer_interests":["basketball","baseball"]}`, false},
		// Exact strings are case-sensitive; a String.Array matches if one
		// of its values does.
		{`{"customer_interests":["rugby","tennis"]}`, true},
		{`{"customer_interests":["Rugby"]}`, false},
		{`{"customer_interests":[{"equals-ignore-case":"RUGBY"}]}`, true},
		{`{"customer_interests":[{"prefix":"hock"}]}`, true},
		{`{"store":[{"suffix":"_corp"}]}`, true},
		{`{"customer_interests":[{"anything-but":["rugby","tennis"]}]}`, true}, // soccer and hockey are neither
		{`{"event":[{"anything-but":{"prefix":"order_"}}]}`, false},
		// Numbers: exact, and ranges.
		{`{"price_usd":[210.75]}`, true},
		{`{"price_usd":[{"numeric":[">",0,"<=",150]}]}`, false},
		{`{"price_usd":[{"numeric":["=",210.75]}]}`, true},
		// Key matching.
		{`{"store":[{"exists":true}]}`, true},
		{`{"encrypted":[{"exists":false}]}`, true},
		{`{"encrypted":[{"exists":true}]}`, false},
		// OR across keys.
		{`{"store":["other_corp"],"$or":[{"event":["order_placed"]},{"price_usd":[{"numeric":["<",10]}]}]}`, false},
		{`{"store":["example_corp"],"$or":[{"event":["order_shipped"]},{"price_usd":[{"numeric":[">",200]}]}]}`, true},
	}
	for _, c := range cases {
		for _, scope := range []string{ScopeMessageAttributes, ScopeMessageBody} {
			p, err := CompileFilterPolicy(c.policy, scope)
			if err != nil {
				t.Fatalf("%s (%s): %v", c.policy, scope, err)
			}
			if got := p.Match(awsExampleBody, awsExampleAttributes); got != c.want {
				t.Errorf("%s (%s) = %v, want %v", c.policy, scope, got, c.want)
			}
		}
	}
}

// TestFilterPolicyBodyPaths: in a message body, a dotted key names a nested
// path, and a policy below a key looks inside an array of objects.
func TestFilterPolicyBodyPaths(t *testing.T) {
	body := `{"order":{"status":"paid","items":[{"sku":"a-1","qty":2},{"sku":"b-7","qty":1}]},
		"Records":[{"s3":{"object":{"key":"uploads/cat.jpg"}}},{"s3":{"object":{"key":"tmp/x"}}}]}`
	cases := []struct {
		policy string
		want   bool
	}{
		{`{"order.status":["paid"]}`, true},
		{`{"order.status":["open"]}`, false},
		{`{"order":{"status":["paid"]}}`, true},
		{`{"order.items.sku":["b-7"]}`, true},
		{`{"order":{"items":{"sku":[{"prefix":"b-"}]}}}`, true},
		{`{"order":{"items":{"sku":["c-9"]}}}`, false},
		{`{"Records":{"s3":{"object":{"key":[{"prefix":"uploads/"}]}}}}`, true},
		{`{"Records.s3.object.key":[{"suffix":".png"}]}`, false},
		{`{"order.missing":[{"exists":false}]}`, true},
		{`{"order.status":[{"exists":true}]}`, true},
	}
	for _, c := range cases {
		p, err := CompileFilterPolicy(c.policy, ScopeMessageBody)
		if err != nil {
			t.Fatalf("%s: %v", c.policy, err)
		}
		if got := p.MatchBody(body); got != c.want {
			t.Errorf("%s = %v, want %v", c.policy, got, c.want)
		}
	}
	// In the attribute scope a dotted key is an attribute's name.
	p, err := CompileFilterPolicy(`{"a.b":["x"]}`, ScopeMessageAttributes)
	if err != nil {
		t.Fatal(err)
	}
	if !p.MatchAttributes(map[string]Attribute{"a.b": {DataType: "String", StringValue: "x"}}) {
		t.Error("the attribute a.b does not match {\"a.b\":[\"x\"]}")
	}
}

// TestFilterPolicyLimits: AWS's limits, counted as AWS counts them, with
// its words.
func TestFilterPolicyLimits(t *testing.T) {
	values := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = `"v` + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + `"`
		}
		return "[" + strings.Join(v, ",") + "]"
	}
	cases := []struct {
		policy, scope, err string
	}{
		{`{"a":` + values(150) + `}`, ScopeMessageAttributes, ""},
		{`{"a":` + values(151) + `}`, ScopeMessageAttributes, "Invalid parameter: FilterPolicy: Filter policy is too complex"},
		{`{"a":` + values(10) + `,"b":` + values(15) + `}`, ScopeMessageAttributes, ""},
		{`{"a":` + values(10) + `,"b":` + values(16) + `}`, ScopeMessageAttributes, "Invalid parameter: FilterPolicy: Filter policy is too complex"},
		// AWS's nested example: four values three levels deep and three
		// values two levels deep count 3 × 4 × 2 × 3 = 72 ...
		{`{"key_a":{"key_b":{"key_c":["1","2","3","4"]}},"key_d":{"key_e":["1","2","3"]}}`, ScopeMessageBody, ""},
		// ... so twice as many values on key_e (144) still pass, and a
		// third more (3 × 4 × 2 × 7 = 168) do not, though their product
		// is only 28.
		{`{"key_a":{"key_b":{"key_c":["1","2","3","4"]}},"key_d":{"key_e":["1","2","3","4","5","6"]}}`, ScopeMessageBody, ""},
		{`{"key_a":{"key_b":{"key_c":["1","2","3","4"]}},"key_d":{"key_e":["1","2","3","4","5","6","7"]}}`, ScopeMessageBody, "Invalid parameter: FilterPolicy: Filter policy is too complex"},
		// $or branches add up: (1 × 2) + (1 × 1 × 2) + (1 × 1 × 3) = 7.
		{`{"source":["aws.cloudwatch"],"$or":[{"metricName":["CPUUtilization","ReadLatency"]},{"metricType":["MetricType"],"$or":[{"metricId":[1234,4321]},{"spaceId":[1000,2000,3000]}]}]}`, ScopeMessageAttributes, ""},
		// At the limit: $or branches add up (75 + 75, not 75 × 75), and
		// a key beside the $or multiplies their sum (2 × (37 + 38)).
		{`{"$or":[{"a":` + values(75) + `},{"b":` + values(75) + `}]}`, ScopeMessageAttributes, ""},
		{`{"$or":[{"a":` + values(75) + `},{"b":` + values(76) + `}]}`, ScopeMessageAttributes, "Invalid parameter: FilterPolicy: Filter policy is too complex"},
		{`{"x":["1","2"],"$or":[{"a":` + values(37) + `},{"b":` + values(38) + `}]}`, ScopeMessageAttributes, ""},
		{`{"x":["1","2"],"$or":[{"a":` + values(38) + `},{"b":` + values(38) + `}]}`, ScopeMessageAttributes, "Invalid parameter: FilterPolicy: Filter policy is too complex"},
		// Five keys at most, counting a nested policy's parent keys.
		{`{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}`, ScopeMessageAttributes, "Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys"},
		{`{"a":{"x":["1"],"y":["1"],"z":["1"]},"b":{"x":["1"],"y":["1"],"z":["1"]}}`, ScopeMessageBody, ""},
		{`{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":{"x":["1"]}}`, ScopeMessageBody, "Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys"},
		{`{"a":{"b":["1"]}}`, ScopeMessageAttributes, "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"},
	}
	for _, c := range cases {
		_, err := CompileFilterPolicy(c.policy, c.scope)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.err) || (c.err == "") != (err == nil) {
			t.Errorf("%.80s (%s): error %q, want %q", c.policy, c.scope, got, c.err)
		}
	}
}
