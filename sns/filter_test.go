package sns

import (
	"context"
	"testing"

	"github.com/tidemq/tidemq/storage/mem"

	"github.com/tidemq/tidemq"
)

func TestFilterPolicyAttributes(t *testing.T) {
	attrs := map[string]Attribute{
		"color":  {DataType: "String", StringValue: "Red"},
		"price":  {DataType: "Number", StringValue: "42.5"},
		"tags":   {DataType: "String.Array", StringValue: `["a","b",3]`},
		"ip":     {DataType: "String", StringValue: "10.0.3.7"},
		"binary": {DataType: "Binary", BinaryValue: []byte{1}},
	}
	cases := []struct {
		policy string
		want   bool
	}{
		{`{"color":["Red"]}`, true},
		{`{"color":["red"]}`, false},
		{`{"color":["blue","Red"]}`, true},
		{`{"color":[{"equals-ignore-case":"RED"}]}`, true},
		{`{"color":[{"prefix":"Re"}]}`, true},
		{`{"color":[{"prefix":"re"}]}`, false},
		{`{"color":[{"suffix":"ed"}]}`, true},
		{`{"color":[{"anything-but":"Red"}]}`, false},
		{`{"color":[{"anything-but":["Blue","Green"]}]}`, true},
		{`{"color":[{"anything-but":{"prefix":"R"}}]}`, false},
		{`{"missing":[{"anything-but":"x"}]}`, false},
		{`{"price":[42.5]}`, true},
		{`{"price":[42.50000]}`, true},
		{`{"price":["42.5"]}`, false},
		{`{"price":[{"numeric":[">",40,"<=",42.5]}]}`, true},
		{`{"price":[{"numeric":["<",42.5]}]}`, false},
		{`{"price":[{"numeric":["=",42.5]}]}`, true},
		{`{"price":[{"anything-but":[1,2]}]}`, true},
		{`{"tags":["b"]}`, true},
		{`{"tags":[3]}`, true},
		{`{"tags":["c"]}`, false},
		{`{"color":[{"exists":true}]}`, true},
		{`{"missing":[{"exists":false}]}`, true},
		{`{"color":[{"exists":false}]}`, false},
		{`{"binary":[{"exists":true}]}`, false}, // binary attributes are ignored
		{`{"ip":[{"cidr":"10.0.0.0/16"}]}`, true},
		{`{"ip":[{"cidr":"10.1.0.0/16"}]}`, false},
		{`{"color":["Red"],"price":[{"numeric":[">",100]}]}`, false}, // keys are AND'ed
		{`{"$or":[{"color":["blue"]},{"price":[42.5]}]}`, true},
		{`{"$or":[{"color":["blue"]},{"price":[1]}]}`, false},
	}
	for _, c := range cases {
		p, err := CompileFilterPolicy(c.policy, "")
		if err != nil {
			t.Errorf("%s: %v", c.policy, err)
			continue
		}
		if got := p.MatchAttributes(attrs); got != c.want {
			t.Errorf("%s: match = %v, want %v", c.policy, got, c.want)
		}
	}
}

func TestFilterPolicyBody(t *testing.T) {
	body := `{"order":{"status":"paid","total":120,"items":["book","pen"]},"region":"eu-west-1"}`
	cases := []struct {
		policy string
		want   bool
	}{
		{`{"order":{"status":["paid"]}}`, true},
		{`{"order":{"status":["new"]}}`, false},
		{`{"order":{"total":[{"numeric":[">=",100]}]},"region":[{"prefix":"eu-"}]}`, true},
		{`{"order":{"items":["pen"]}}`, true},
		{`{"order":{"coupon":[{"exists":false}]}}`, true},
		{`{"shipping":{"method":[{"exists":false}]}}`, true},
		{`{"region":["us-east-1"]}`, false},
	}
	for _, c := range cases {
		p, err := CompileFilterPolicy(c.policy, ScopeMessageBody)
		if err != nil {
			t.Errorf("%s: %v", c.policy, err)
			continue
		}
		if got := p.MatchBody(body); got != c.want {
			t.Errorf("%s: match = %v, want %v", c.policy, got, c.want)
		}
	}
	p, _ := CompileFilterPolicy(`{"a":["b"]}`, ScopeMessageBody)
	if p.MatchBody("not json") {
		t.Error("a non-JSON body matched")
	}
}

func TestFilterPolicyInvalid(t *testing.T) {
	for _, policy := range []string{
		`[]`, `{}`, `{"a":"b"}`, `{"a":[]}`, `{"a":[{"nope":1}]}`, `{"a":[{"numeric":["<"]}]}`,
		`{"a":[{"numeric":["<",1,">",0]}]}`, `{"a":[{"exists":"yes"}]}`, `{"a":{"b":["c"]}}`,
		`{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1],"f":[1]}`, `{"a":[{"cidr":"nope"}]}`,
		`{"a":[1,2,3,4,5,6],"b":[1,2,3,4,5,6],"c":[1,2,3,4,5]}`, // 180 combinations
	} {
		if _, err := CompileFilterPolicy(policy, ""); err == nil {
			t.Errorf("%s compiled", policy)
		} else if e := AsError(err); e.Code != tidemq.ErrSNSInvalidParameter {
			t.Errorf("%s: %v", policy, err)
		}
	}
	if _, err := CompileFilterPolicy(`{"a":["b"]}`, "Elsewhere"); err == nil {
		t.Error("a bad scope was accepted")
	}
}

func TestStorePersists(t *testing.T) {
	o := Options{Store: mem.New()} // mem.Store.Close keeps the data
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	topic, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "t", Attributes: map[string]string{"DisplayName": "T"}, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:q", Attributes: map[string]string{"RawMessageDelivery": "True"}})
	if err != nil {
		t.Fatal(err)
	}
	cert := string(s.CertificatePEM())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	attrs, err := s2.GetSubscriptionAttributes(context.Background(), GetSubscriptionAttributesParams{SubscriptionARN: sub.ARN})
	if err != nil || attrs["RawMessageDelivery"] != "true" {
		t.Fatalf("reopened subscription: %v %v", attrs, err)
	}
	ta, err := s2.GetTopicAttributes(context.Background(), GetTopicAttributesParams{TopicARN: topic.ARN})
	if err != nil || ta["DisplayName"] != "T" || ta["SubscriptionsConfirmed"] != "1" {
		t.Fatalf("reopened topic: %v %v", ta, err)
	}
	if string(s2.CertificatePEM()) != cert {
		t.Fatal("the signing certificate changed across a restart")
	}
	if err := s2.DeleteTopic(context.Background(), DeleteTopicParams{TopicARN: topic.ARN}); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.GetSubscriptionAttributes(context.Background(), GetSubscriptionAttributesParams{SubscriptionARN: sub.ARN}); AsError(err).Code != tidemq.ErrSNSNotFound {
		t.Fatalf("subscription survived its topic: %v", err)
	}
}
