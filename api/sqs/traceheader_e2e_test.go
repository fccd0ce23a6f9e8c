package sqs_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/tidemq/tidemq"
)

// The AWSTraceHeader system attribute must be an X-Ray trace header of at
// most tidemq.MaxTraceHeaderBytes (tidemq.ValidateTraceHeader); an 8 MB one
// was stored and handed out with the message.
func TestAWSTraceHeaderChecked(t *testing.T) {
	e := newEnv(t)
	queueURL := e.createQueue("q", nil)
	trace := func(v string) map[string]types.MessageSystemAttributeValue {
		return map[string]types.MessageSystemAttributeValue{"AWSTraceHeader": {DataType: aws.String("String"), StringValue: &v}}
	}
	huge := "Root=1-5759e988-bd862e3fe1be46a994272793;Pad=" + strings.Repeat("t", 4<<20)
	for _, bad := range []string{huge, "Root=dummy;Parent=53995c3f42cd8ad8;Sampled=0", "not a trace header"} {
		_, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: aws.String("x"),
			MessageSystemAttributes: trace(bad)})
		var generic *smithy.GenericAPIError
		wantAPIError(t, err, "InvalidParameterValue", &generic)
		if len(generic.Message) > 200 || !strings.Contains(generic.Message, "AWSTraceHeader") {
			t.Errorf("%.40s...: message %.300q", bad, generic.Message)
		}
	}
	// In a batch, the entry fails and the others are sent.
	out, err := e.client.SendMessageBatch(e.ctx, &awssqs.SendMessageBatchInput{QueueUrl: &queueURL, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("good"), MessageBody: aws.String("x"), MessageSystemAttributes: trace("Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1")},
		{Id: aws.String("bad"), MessageBody: aws.String("x"), MessageSystemAttributes: trace(huge)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Successful) != 1 || len(out.Failed) != 1 || aws.ToString(out.Failed[0].Id) != "bad" ||
		aws.ToString(out.Failed[0].Code) != "InvalidParameterValue" {
		t.Errorf("batch: %d successful, failed %+v", len(out.Successful), out.Failed)
	}

	// The Query protocol decodes to the same check.
	form := url.Values{"Action": {"SendMessage"}, "QueueUrl": {queueURL}, "MessageBody": {"x"},
		"MessageSystemAttribute.1.Name": {"AWSTraceHeader"}, "MessageSystemAttribute.1.Value.DataType": {"String"},
		"MessageSystemAttribute.1.Value.StringValue": {huge}}
	resp, err := http.PostForm(e.srv.URL+"/", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Amzn-Requestid") == "" {
		t.Errorf("Query send with an oversized AWSTraceHeader: %d", resp.StatusCode)
	}

	// Only the one good message went in.
	msgs, err := e.eng.PeekMessages(e.ctx, tidemq.PeekMessagesParams{Queue: "q", IncludeInflight: true})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("peek: %v, %d messages, want 1", err, len(msgs))
	}
}
