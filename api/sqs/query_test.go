package sqs

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
)

// The forms below were produced by botocore's QuerySerializer (botocore
// 1.43) run on the SQS model with the query-era serialisation traits
// (locationName, flattened) put back, as the Go SDK's schemas still carry
// them. They are what a Query-mode SDK sends.

func decodeQueryForm(t *testing.T, form string) any {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	q, err := parseQueryParams(r, []byte(form))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	name, err := queryAction(r, q)
	if err != nil {
		t.Fatalf("action: %v", err)
	}
	in, err := actions[name].decodeQuery(q)
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return in
}

func intp(v int) *int       { return &v }
func strp(v string) *string { return &v }

func TestQueryDecode(t *testing.T) {
	tests := []struct {
		name string
		form string
		want any
	}{{
		name: "SendMessageBatch entries, attributes, base64 binary, system attributes",
		form: "Action=SendMessageBatch&Version=2012-11-05&QueueUrl=http%3A%2F%2Flocalhost%2F000000000000%2Fq" +
			"&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=hi+%26+bye" +
			"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Name=bin" +
			"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType=Binary" +
			"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.BinaryValue=AP8%3D" +
			"&SendMessageBatchRequestEntry.1.MessageAttribute.2.Name=str" +
			"&SendMessageBatchRequestEntry.1.MessageAttribute.2.Value.DataType=String" +
			"&SendMessageBatchRequestEntry.1.MessageAttribute.2.Value.StringValue=v" +
			"&SendMessageBatchRequestEntry.1.MessageSystemAttribute.1.Name=AWSTraceHeader" +
			"&SendMessageBatchRequestEntry.1.MessageSystemAttribute.1.Value.DataType=String" +
			"&SendMessageBatchRequestEntry.1.MessageSystemAttribute.1.Value.StringValue=Root%3D1" +
			"&SendMessageBatchRequestEntry.2.Id=b&SendMessageBatchRequestEntry.2.MessageBody=x" +
			"&SendMessageBatchRequestEntry.2.DelaySeconds=5&SendMessageBatchRequestEntry.2.MessageGroupId=g" +
			"&SendMessageBatchRequestEntry.2.MessageDeduplicationId=d",
		want: &sendMessageBatchInput{
			QueueURL: "http://localhost/000000000000/q",
			Entries: []sendMessageBatchEntry{
				{ID: "a", messageFields: messageFields{
					MessageBody: "hi & bye",
					MessageAttributes: map[string]attributeValue{
						"bin": {DataType: "Binary", BinaryValue: []byte{0x00, 0xff}},
						"str": {DataType: "String", StringValue: "v"},
					},
					MessageSystemAttributes: map[string]attributeValue{
						"AWSTraceHeader": {DataType: "String", StringValue: "Root=1"},
					},
				}},
				{ID: "b", messageFields: messageFields{
					MessageBody: "x", DelaySeconds: intp(5), MessageGroupID: strp("g"), MessageDeduplicationID: strp("d"),
				}},
			},
		},
	}, {
		name: "ReceiveMessage lists and numbers",
		form: "Action=ReceiveMessage&Version=2012-11-05&QueueUrl=q&AttributeName.1=SenderId&AttributeName.2=SentTimestamp" +
			"&MessageAttributeName.1=a.%2A&MessageAttributeName.2=b&MaxNumberOfMessages=10&VisibilityTimeout=0" +
			"&WaitTimeSeconds=20&ReceiveRequestAttemptId=r1&MessageSystemAttributeName.1=SequenceNumber",
		want: &receiveMessageInput{
			QueueURL: "q", AttributeNames: []string{"SenderId", "SentTimestamp"},
			MessageSystemAttributeNames: []string{"SequenceNumber"},
			MessageAttributeNames:       []string{"a.*", "b"},
			MaxNumberOfMessages:         intp(10), VisibilityTimeout: intp(0), WaitTimeSeconds: intp(20),
			ReceiveRequestAttemptID: "r1",
		},
	}, {
		name: "CreateQueue attribute and tag maps",
		form: "Action=CreateQueue&Version=2012-11-05&QueueName=q.fifo&Attribute.1.Name=FifoQueue&Attribute.1.Value=true" +
			"&Attribute.2.Name=DelaySeconds&Attribute.2.Value=5&Tag.1.Key=team&Tag.1.Value=a&Tag.2.Key=env&Tag.2.Value=b",
		want: &createQueueInput{
			QueueName:  "q.fifo",
			Attributes: map[string]string{"FifoQueue": "true", "DelaySeconds": "5"},
			Tags:       map[string]string{"team": "a", "env": "b"},
		},
	}, {
		name: "GetQueueAttributes names",
		form: "Action=GetQueueAttributes&Version=2012-11-05&QueueUrl=q&AttributeName.1=All&AttributeName.2=QueueArn",
		want: &getQueueAttributesInput{QueueURL: "q", AttributeNames: []string{"All", "QueueArn"}},
	}, {
		name: "TagQueue",
		form: "Action=TagQueue&Version=2012-11-05&QueueUrl=q&Tag.1.Key=k&Tag.1.Value=v",
		want: &tagQueueInput{QueueURL: "q", Tags: map[string]string{"k": "v"}},
	}, {
		name: "UntagQueue",
		form: "Action=UntagQueue&Version=2012-11-05&QueueUrl=q&TagKey.1=k1&TagKey.2=k2",
		want: &untagQueueInput{QueueURL: "q", TagKeys: []string{"k1", "k2"}},
	}, {
		name: "AddPermission",
		form: "Action=AddPermission&Version=2012-11-05&QueueUrl=q&Label=l&AWSAccountId.1=111122223333" +
			"&ActionName.1=SendMessage&ActionName.2=ReceiveMessage",
		want: &addPermissionInput{QueueURL: "q", Label: "l", AWSAccountIDs: []string{"111122223333"},
			Actions: []string{"SendMessage", "ReceiveMessage"}},
	}, {
		name: "DeleteMessageBatch",
		form: "Action=DeleteMessageBatch&Version=2012-11-05&QueueUrl=q&DeleteMessageBatchRequestEntry.1.Id=1" +
			"&DeleteMessageBatchRequestEntry.1.ReceiptHandle=rh1&DeleteMessageBatchRequestEntry.2.Id=2" +
			"&DeleteMessageBatchRequestEntry.2.ReceiptHandle=rh2",
		want: &deleteMessageBatchInput{QueueURL: "q", Entries: []deleteMessageBatchEntry{
			{ID: "1", ReceiptHandle: "rh1"}, {ID: "2", ReceiptHandle: "rh2"}}},
	}, {
		name: "ChangeMessageVisibilityBatch",
		form: "Action=ChangeMessageVisibilityBatch&Version=2012-11-05&QueueUrl=q" +
			"&ChangeMessageVisibilityBatchRequestEntry.1.Id=1&ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle=rh1" +
			"&ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout=60",
		want: &changeVisibilityBatchInput{QueueURL: "q", Entries: []changeVisibilityBatchEntry{
			{ID: "1", ReceiptHandle: "rh1", VisibilityTimeout: intp(60)}}},
	}, {
		name: "SendMessage with a custom Number type",
		form: "Action=SendMessage&Version=2012-11-05&QueueUrl=q&MessageBody=b&MessageAttribute.1.Name=n" +
			"&MessageAttribute.1.Value.DataType=Number.int&MessageAttribute.1.Value.StringValue=6",
		want: &sendMessageInput{QueueURL: "q", messageFields: messageFields{MessageBody: "b",
			MessageAttributes: map[string]attributeValue{"n": {DataType: "Number.int", StringValue: "6"}}}},
	}, {
		name: "SetQueueAttributes",
		form: "Action=SetQueueAttributes&Version=2012-11-05&QueueUrl=q&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=60",
		want: &setQueueAttributesInput{QueueURL: "q", Attributes: map[string]string{"VisibilityTimeout": "60"}},
	}, {
		name: "list items in index order, gaps and non-numeric keys ignored",
		form: "Action=GetQueueAttributes&QueueUrl=q&AttributeName.10=C&AttributeName.2=B&AttributeName.1=A&AttributeName.x=Z&AttributeName.0=Y",
		want: &getQueueAttributesInput{QueueURL: "q", AttributeNames: []string{"A", "B", "C"}},
	}, {
		name: "an item's parameters need not be adjacent, and each item is decoded once",
		form: "Action=DeleteMessageBatch&QueueUrl=q&DeleteMessageBatchRequestEntry.2.Id=b&DeleteMessageBatchRequestEntry.1.Id=a" +
			"&DeleteMessageBatchRequestEntry.1-=junk&DeleteMessageBatchRequestEntry.1=v&DeleteMessageBatchRequestEntry.1.ReceiptHandle=rh1" +
			"&DeleteMessageBatchRequestEntry.2.ReceiptHandle=rh2",
		want: &deleteMessageBatchInput{QueueURL: "q", Entries: []deleteMessageBatchEntry{
			{ID: "a", ReceiptHandle: "rh1"}, {ID: "b", ReceiptHandle: "rh2"}}},
	}, {
		name: "a parameter given twice keeps its first value",
		form: "Action=GetQueueUrl&QueueName=first&QueueName=second&QueueOwnerAWSAccountId=1&QueueOwnerAWSAccountId=2",
		want: &getQueueURLInput{QueueName: "first", QueueOwnerAWSAccountID: "1"},
	}, {
		name: "an empty flattened list (botocore sends Name=) is no list",
		form: "Action=GetQueueAttributes&QueueUrl=q&AttributeName=",
		want: &getQueueAttributesInput{QueueURL: "q"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeQueryForm(t, tt.form)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestQueryDecodeErrors(t *testing.T) {
	tests := []struct {
		form string
		code *tidemq.ErrorCode
		msg  string
	}{
		{"Action=ReceiveMessage&QueueUrl=q&MaxNumberOfMessages=ten", tidemq.ErrInvalidParameterValue,
			"Value ten for parameter MaxNumberOfMessages is invalid. Reason: Must be an integer."},
		{"Action=SendMessage&QueueUrl=q&MessageBody=b&MessageAttribute.1.Name=x&MessageAttribute.1.Value.DataType=Binary" +
			"&MessageAttribute.1.Value.BinaryValue=%21%21", tidemq.ErrInvalidParameterValue,
			"Value for parameter MessageAttribute.Value.BinaryValue is invalid. Reason: it is not valid base64."},
		{"Action=ChangeMessageVisibilityBatch&ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout=1.5",
			tidemq.ErrInvalidParameterValue, "Value 1.5 for parameter VisibilityTimeout is invalid. Reason: Must be an integer."},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.form))
		q, err := parseQueryParams(r, []byte(tt.form))
		if err != nil {
			t.Fatal(err)
		}
		_, err = actions[q.str("Action")].decodeQuery(q)
		var e *tidemq.Error
		if !errors.As(err, &e) || e.Code != tt.code || e.Message != tt.msg {
			t.Errorf("%s: got %v, want %s %q", tt.form, err, tt.code.Code, tt.msg)
		}
	}
}
