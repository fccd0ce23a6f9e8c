package dlq_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq/dlq"
)

func TestFilter(t *testing.T) {
	m := &dlq.Message{
		Body:       wrappedBody,
		Attributes: map[string]string{"ApproximateReceiveCount": "3", "MessageGroupId": "seller-1"},
		MessageAttributes: map[string]types.MessageAttributeValue{
			"tenant":               str("acme"),
			"tidemq.redrive-count": {DataType: aws.String("Number"), StringValue: aws.String("2")},
		},
	}
	sns := &dlq.Message{Body: snsBody}
	cases := []struct {
		expr string
		msg  *dlq.Message
		want bool
	}{
		{`body.contains("DOCUMENT_PROCESSED")`, m, true},
		{`body.contains("nope")`, m, false},
		{`body.startsWith("{\"Message\"")`, m, true},
		{`attr.tenant == "acme"`, m, true},
		{`attr.tenant == 'acme'`, m, true},
		{`attr.tenant != "acme"`, m, false},
		{`attr.missing != "acme"`, m, true},
		{`attr.missing == "acme"`, m, false},
		{`attr["tidemq.redrive-count"] >= 2`, m, true},
		{`attr["tidemq.redrive-count"] > 2`, m, false},
		{`sys.ApproximateReceiveCount == 3 && sys.MessageGroupId == seller-1`, m, true},
		{`json.Message.contains("caseId")`, m, true},
		{`inner.caseId == 1001`, m, true},
		{`inner.caseId == "1001"`, m, true},
		{`inner.caseId == 1001.0`, m, true},
		{`inner.eventType == DOCUMENT_PROCESSED`, m, true},
		{`inner.eventDetail == null`, m, false},
		{`inner.eventDetail.retry_count == 2`, m, true}, // eventDetail is a JSON string
		{`json.Message.eventDetail.retry_count == 2`, m, true},
		{`json.Message.caseId == 1001`, m, true},
		{`has(inner.eventDetail.retry_count) && !has(inner.eventDetail.nope)`, m, true},
		{`inner.eventDetail.contains("retry_count")`, m, true}, // the string itself, still
		{`json.Message.orderId == 42`, sns, true},
		{`eventType=DOCUMENT_PROCESSED`, m, true},
		{`tenant=acme`, m, true},
		{`tenant=globex || caseId = 1001`, m, true},
		{`!(tenant=globex) && !has(attr.other)`, m, true},
		{`has(attr["tidemq.redrive-count"])`, m, true},
		{`has(inner.nothing)`, m, false},
		{`json.Type == "Notification" && inner.customer.matches("^Zo")`, sns, true},
		{`inner.orderId == 42 && json.Subject.endsWith("failed")`, sns, true},
		{`json.nope[0].x == 1`, sns, false},
		{`body.matches("日本語")`, sns, true},
	}
	for _, c := range cases {
		f, err := dlq.ParseFilter(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := f.Match(c.msg); got != c.want {
			t.Errorf("%s = %v, want %v", c.expr, got, c.want)
		}
	}
	arr := &dlq.Message{Body: `{"items":[{"sku":"a"},{"sku":"b"}],"ok":true}`}
	for expr, want := range map[string]bool{`json.items[1].sku == b`: true, `json.items[2].sku == b`: false, `json.ok == true`: true, `json.ok`: true} {
		f, err := dlq.ParseFilter(expr)
		if err != nil || f.Match(arr) != want {
			t.Errorf("%s: %v, want %v", expr, err, want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	for _, expr := range []string{`body ==`, `attr.a.b == 1`, `body.x == 1`, `foo.bar == 1`, `(attr.a == 1`,
		`attr.a == "unterminated`, `body.matches("[")`, `body.contains(1)`, `== 1`, `attr.a == 1 junk`, `attr.a @ 1`} {
		if _, err := dlq.ParseFilter(expr); err == nil {
			t.Errorf("%q parsed", expr)
		}
	}
	if f, err := dlq.ParseFilter("  "); f != nil || err != nil {
		t.Errorf("empty filter: %v %v", f, err)
	}
}

func TestUnwrap(t *testing.T) {
	if env, ok := dlq.Unwrap(snsBody); !ok || env.Kind != "sns" || env.Subject != "order failed" {
		t.Errorf("SNS: %+v %v", env, ok)
	}
	if env, ok := dlq.Unwrap(wrappedBody); !ok || env.Kind != "wrapped" {
		t.Errorf("wrapped: %+v %v", env, ok)
	}
	for _, b := range []string{`{"Message":"plain text"}`, `{"Message":42}`, `[1]`, `text`, `{"a":1}`} {
		if _, ok := dlq.Unwrap(b); ok {
			t.Errorf("%s unwrapped", b)
		}
	}
}
