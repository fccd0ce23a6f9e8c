package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq/internal/lambdatest"
)

// lambdaTemplate is a SAM stack of two unmodified Lambda functions, one
// in Go (aws-lambda-go, provided.al2023) and one in Python, each consuming
// a queue with ReportBatchItemFailures; a message they list as failed goes
// to the queue's DLQ after two receives.
const lambdaTemplate = `AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Timeout: 3
    MemorySize: 256
Resources:
  GoDLQ:
    Type: AWS::SQS::Queue
    Properties: {QueueName: go-jobs-dlq}
  GoJobs:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: go-jobs
      VisibilityTimeout: 5
      RedrivePolicy: {deadLetterTargetArn: !GetAtt GoDLQ.Arn, maxReceiveCount: 2}
  PyDLQ:
    Type: AWS::SQS::Queue
    Properties: {QueueName: py-jobs-dlq}
  PyJobs:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: py-jobs
      VisibilityTimeout: 5
      RedrivePolicy: {deadLetterTargetArn: !GetAtt PyDLQ.Arn, maxReceiveCount: 2}
  GoWorker:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: go-worker
      Runtime: provided.al2023
      Handler: bootstrap
      CodeUri: go/
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt GoJobs.Arn
            BatchSize: 10
            FunctionResponseTypes: [ReportBatchItemFailures]
            ScalingConfig: {MaximumConcurrency: 2}
  PyWorker:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: py-worker
      Runtime: python3.12
      Handler: app.handler
      CodeUri: py/
      Environment:
        Variables: {GREETING: hello}
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt PyJobs.Arn
            FunctionResponseTypes: [ReportBatchItemFailures]
`

// TestLambdaHandlersFromSAMTemplate applies a SAM template to a running
// server with `tidemq apply`; the server runs the Go and Python handlers
// through the Lambda Runtime API (no Docker). Messages sent with the SDK
// are processed: successes deleted, the one each handler reports failed
// retried and dead-lettered after maxReceiveCount.
func TestLambdaHandlersFromSAMTemplate(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "py"), 0o755); err != nil {
		t.Fatal(err)
	}
	lambdatest.BuildGo(t, filepath.Join(project, "go"), "bootstrap")
	lambdatest.CopyPython(t, filepath.Join(project, "py"))
	tmpl := filepath.Join(project, "template.yaml")
	if err := os.WriteFile(tmpl, []byte(lambdaTemplate), 0o644); err != nil {
		t.Fatal(err)
	}

	s := startServer(t, "--allow-trigger-commands")
	out, errOut, code := runTidemq(t, nil, "apply", tmpl, "--endpoint", s.url)
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"+ trigger go-worker.go-jobs (create)", "+ trigger py-worker.py-jobs (create)",
		"Target = function provided.al2023 bootstrap in " + filepath.Join(project, "go"), "Environment = GREETING"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hello") {
		t.Errorf("apply shows an environment value:\n%s", out)
	}

	ctx := context.Background()
	client := sqs.New(sqs.Options{BaseEndpoint: aws.String(s.url), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDE2E", "secret", "")})
	url := func(name string) string {
		o, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(o.QueueUrl)
	}
	for _, q := range []string{"go-jobs", "py-jobs"} {
		var entries []types.SendMessageBatchRequestEntry
		for i, body := range []string{"ok", "fail", "ok"} {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String(body)})
		}
		res, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url(q)), Entries: entries})
		if err != nil || len(res.Failed) != 0 {
			t.Fatalf("send to %s: %v %+v", q, err, res)
		}
	}

	// The failed message of each reaches its DLQ after two receives; the
	// others were deleted after the first.
	for _, q := range []string{"go-jobs", "py-jobs"} {
		dlq := url(q + "-dlq")
		var got []types.Message
		deadline := time.Now().Add(60 * time.Second)
		for len(got) == 0 && time.Now().Before(deadline) {
			o, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq), WaitTimeSeconds: 2,
				MaxNumberOfMessages: 10, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
			if err != nil {
				t.Fatal(err)
			}
			got = o.Messages
		}
		if len(got) != 1 || aws.ToString(got[0].Body) != "fail" {
			t.Fatalf("%s: the DLQ holds %+v, want the failed message", q, got)
		}
		if n := got[0].Attributes["ApproximateReceiveCount"]; n != "3" { // two by the trigger, one here
			t.Errorf("%s: the dead letter was received %s times", q, n)
		}
		a, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url(q)),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
		if err != nil {
			t.Fatal(err)
		}
		if a.Attributes["ApproximateNumberOfMessages"] != "0" || a.Attributes["ApproximateNumberOfMessagesNotVisible"] != "0" {
			t.Errorf("%s still holds messages: %v", q, a.Attributes)
		}
	}

	// The handlers' output is in the server's log, and the trigger list
	// shows what ran.
	if logs := s.logs.String(); !strings.Contains(logs, "processed") || !strings.Contains(logs, "function=go-worker") {
		t.Errorf("the Go handler's output is not in the server's log:\n%s", logs)
	}
	out, errOut, code = runTidemq(t, nil, "trigger", "list", "--endpoint", s.url)
	if code != 0 || !strings.Contains(out, "function python3.12 app.handler") || !strings.Contains(out, "function provided.al2023 bootstrap") {
		t.Fatalf("trigger list: exit %d\n%s\n%s", code, out, errOut)
	}
}

// Without --allow-trigger-commands the server runs no function: apply
// lists their triggers as not applied, and says how to allow them.
func TestLambdaHandlersNeedTheFlag(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, "py"), 0o755)
	os.MkdirAll(filepath.Join(project, "go"), 0o755)
	lambdatest.CopyPython(t, filepath.Join(project, "py"))
	os.WriteFile(filepath.Join(project, "go", "bootstrap"), []byte("#!/bin/sh\n"), 0o755)
	tmpl := filepath.Join(project, "template.yaml")
	os.WriteFile(tmpl, []byte(lambdaTemplate), 0o644)
	s := startServer(t)
	out, errOut, code := runTidemq(t, nil, "apply", tmpl, "--endpoint", s.url)
	if code != 0 || !strings.Contains(out, "! trigger py-worker.py-jobs (not applied: function py-worker runs its code (python3.12) on the server, which does not allow it: start it with --allow-trigger-commands)") {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
}
