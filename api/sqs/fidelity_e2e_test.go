package sqs_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Fidelity details that only the transport decides, checked with the SDK
// (MD5 checks on) or raw HTTP against the handler over the engine.

// TestSDKMessageAttributeNameFilters: the MessageAttributeNames filters of
// ReceiveMessage as SQS applies them (LocalStack's AWS-validated
// test_receive_message_message_attribute_names_filters): "All", "*" and
// ".*" select every attribute, "Hel.*" every name starting with "Hel".
func TestSDKMessageAttributeNameFilters(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue("q", map[string]string{"VisibilityTimeout": "0"})
	_, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("msg"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"Help.Me": {DataType: aws.String("String"), StringValue: aws.String("Me")},
			"Hello":   {DataType: aws.String("String"), StringValue: aws.String("There")},
			"General": {DataType: aws.String("String"), StringValue: aws.String("Kenobi")},
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, ""}, {[]string{"All"}, "General Hello Help.Me"}, {[]string{"*"}, "General Hello Help.Me"},
		{[]string{".*"}, "General Hello Help.Me"}, {[]string{"Foo", "Help"}, ""}, {[]string{"Foo", "Hello"}, "Hello"},
		{[]string{"Hel.*"}, "Hello Help.Me"}, {[]string{"Help.*", "General"}, "General Help.Me"},
	} {
		out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: c.names})
		if err != nil {
			t.Fatalf("%v: %v", c.names, err) // includes the SDK's MD5 check of the returned attributes
		}
		if len(out.Messages) != 1 {
			t.Fatalf("%v: %d messages", c.names, len(out.Messages))
		}
		var got []string
		for n := range out.Messages[0].MessageAttributes {
			got = append(got, n)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != c.want {
			t.Errorf("MessageAttributeNames %q returned [%s], want [%s]", c.names, strings.Join(got, " "), c.want)
		}
	}
}
