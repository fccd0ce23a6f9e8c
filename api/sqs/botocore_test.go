package sqs_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// botocore (the AWS CLI and boto3) against the handler, when they are
// installed: they speak JSON 1.0 to SQS and parse errors their own way (the
// exception class from __type, Error.Code from x-amzn-query-error).

func botocoreEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"AWS_ACCESS_KEY_ID=AKIDCLI", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_MAX_ATTEMPTS=1", "AWS_RETRY_MODE=standard", "AWS_PAGER=",
	)
}

func TestAWSCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the AWS CLI")
	}
	cli, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the AWS CLI is not installed")
	}
	e := newEnv(t)
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(cli, append([]string{"sqs", "--endpoint-url", e.srv.URL, "--output", "json"}, args...)...)
		cmd.Env = botocoreEnv(t)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	out, stderr, err := run("create-queue", "--queue-name", "cli-q", "--tags", "team=a")
	if err != nil {
		t.Fatalf("create-queue: %v %s", err, stderr)
	}
	var created struct{ QueueUrl string }
	if err := json.Unmarshal([]byte(out), &created); err != nil || !strings.HasSuffix(created.QueueUrl, "/000000000000/cli-q") {
		t.Fatalf("create-queue output %q: %v", out, err)
	}
	if _, stderr, err := run("send-message", "--queue-url", created.QueueUrl, "--message-body", "from the cli",
		"--message-attributes", `{"color":{"DataType":"String","StringValue":"red"},"raw":{"DataType":"Binary","BinaryValue":"AP8="}}`); err != nil {
		t.Fatalf("send-message: %v %s", err, stderr)
	}
	out, stderr, err = run("receive-message", "--queue-url", created.QueueUrl, "--attribute-names", "All", "--message-attribute-names", "All")
	if err != nil {
		t.Fatalf("receive-message: %v %s", err, stderr)
	}
	var recv struct {
		Messages []struct {
			Body              string
			Attributes        map[string]string
			MessageAttributes map[string]map[string]string
		}
	}
	if err := json.Unmarshal([]byte(out), &recv); err != nil || len(recv.Messages) != 1 {
		t.Fatalf("receive-message output %q: %v", out, err)
	}
	m := recv.Messages[0]
	// CLI v1 sends a blob given in JSON as the bytes of its text, so "AP8="
	// comes back base64-encoded once more.
	if m.Body != "from the cli" || m.Attributes["SenderId"] != "AKIDCLI" || m.MessageAttributes["raw"]["BinaryValue"] != "QVA4PQ==" {
		t.Errorf("received %+v", m)
	}
	out, _, err = run("list-queue-tags", "--queue-url", created.QueueUrl)
	if err != nil || !strings.Contains(out, `"team": "a"`) {
		t.Errorf("list-queue-tags %q %v", out, err)
	}
	// Errors: the CLI prints botocore's Error.Code, the legacy code.
	_, stderr, err = run("get-queue-url", "--queue-name", "nope")
	if err == nil || !strings.Contains(stderr, "An error occurred (AWS.SimpleQueueService.NonExistentQueue) when calling the GetQueueUrl operation") ||
		!strings.HasSuffix(strings.TrimSpace(stderr), ": The specified queue does not exist.") {
		t.Errorf("get-queue-url error: %v %q", err, stderr)
	}
	_, stderr, err = run("receive-message", "--queue-url", created.QueueUrl, "--max-number-of-messages", "11")
	if err == nil || !strings.Contains(stderr, "(InvalidParameterValue) when calling the ReceiveMessage operation") ||
		!strings.Contains(stderr, ": Value 11 for parameter MaxNumberOfMessages is invalid.") {
		t.Errorf("receive-message error: %v %q", err, stderr)
	}
}

// TestAWSCLIMoveTasks checks that the CLI parses the three move-task
// responses and their errors. The dead letters and the fake clock are driven
// through the SDK client.
func TestAWSCLIMoveTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the AWS CLI")
	}
	cli, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the AWS CLI is not installed")
	}
	e := newEnv(t)
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(cli, append([]string{"sqs", "--endpoint-url", e.srv.URL, "--output", "json"}, args...)...)
		cmd.Env = botocoreEnv(t)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	e.deadLetter("dlq", deadSource{"src", 3})

	out, stderr, err := run("start-message-move-task", "--source-arn", arn("dlq"), "--max-number-of-messages-per-second", "1")
	if err != nil {
		t.Fatalf("start-message-move-task: %v %s", err, stderr)
	}
	var started struct{ TaskHandle string }
	if err := json.Unmarshal([]byte(out), &started); err != nil || started.TaskHandle == "" {
		t.Fatalf("start-message-move-task output %q: %v", out, err)
	}
	e.step()

	out, stderr, err = run("list-message-move-tasks", "--source-arn", arn("dlq"), "--max-results", "10")
	if err != nil {
		t.Fatalf("list-message-move-tasks: %v %s", err, stderr)
	}
	var listed struct{ Results []map[string]any }
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Results) != 1 {
		t.Fatalf("list-message-move-tasks output %q: %v", out, err)
	}
	want := map[string]any{"TaskHandle": started.TaskHandle, "Status": "RUNNING", "SourceArn": arn("dlq"),
		"MaxNumberOfMessagesPerSecond": 1.0, "ApproximateNumberOfMessagesMoved": 1.0, "ApproximateNumberOfMessagesToMove": 3.0,
		"StartedTimestamp": float64(startMs)}
	if got := mustJSON(listed.Results[0]); got != mustJSON(want) {
		t.Errorf("listed task %s, want %s", got, mustJSON(want))
	}

	out, stderr, err = run("cancel-message-move-task", "--task-handle", started.TaskHandle)
	if err != nil {
		t.Fatalf("cancel-message-move-task: %v %s", err, stderr)
	}
	var cancelled map[string]any
	if err := json.Unmarshal([]byte(out), &cancelled); err != nil || mustJSON(cancelled) != `{"ApproximateNumberOfMessagesMoved":1}` {
		t.Errorf("cancel-message-move-task output %q: %v", out, err)
	}

	// Errors: the CLI prints the legacy code and the message (with a
	// retry note between the two).
	for _, tt := range []struct {
		args            []string
		code, operation string
		msg             string
	}{
		{[]string{"cancel-message-move-task", "--task-handle", "bogus"}, "InvalidParameterValue", "CancelMessageMoveTask",
			"Value for parameter TaskHandle is invalid."},
		{[]string{"start-message-move-task", "--source-arn", arn("missing")}, "ResourceNotFoundException", "StartMessageMoveTask",
			"The resource that you specified for the SourceArn parameter doesn't exist."},
		{[]string{"start-message-move-task", "--source-arn", arn("src")}, "InvalidParameterValue", "StartMessageMoveTask",
			"Source queue must be configured as a Dead Letter Queue."},
	} {
		_, stderr, err := run(tt.args...)
		if err == nil || !strings.Contains(stderr, "An error occurred ("+tt.code+") when calling the "+tt.operation+" operation") ||
			!strings.HasSuffix(strings.TrimSpace(stderr), ": "+tt.msg) {
			t.Errorf("%s: %v %q", tt.args[0], err, stderr)
		}
	}
}

// botocoreScript checks which exception classes botocore raises.
const botocoreScript = `
import json, sys, botocore.session
s = botocore.session.get_session()
c = s.create_client('sqs', endpoint_url=sys.argv[1], region_name='us-east-1')
out = {}
def probe(name, fn):
    try:
        fn(); out[name] = 'no error'
    except c.exceptions.ClientError as e:
        out[name] = [type(e).__name__, e.response['Error']['Code'], e.response['Error'].get('QueryErrorCode', ''),
                     e.response['Error']['Message'], e.response['ResponseMetadata']['HTTPStatusCode']]
probe('missing', lambda: c.get_queue_url(QueueName='nope'))
url = c.create_queue(QueueName='py')['QueueUrl']
probe('handle', lambda: c.delete_message(QueueUrl=url, ReceiptHandle='bogus'))
probe('max', lambda: c.receive_message(QueueUrl=url, MaxNumberOfMessages=11))
probe('batch', lambda: c.delete_message_batch(QueueUrl=url, Entries=[{'Id': 'a', 'ReceiptHandle': 'x'}, {'Id': 'a', 'ReceiptHandle': 'y'}]))
probe('movetask', lambda: c.list_message_move_tasks(SourceArn='arn:aws:sqs:us-east-1:000000000000:nope'))
print(json.dumps(out))
`

func TestBotocoreExceptions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python")
	}
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import botocore").Run() != nil {
		t.Skip("botocore is not installed")
	}
	e := newEnv(t)
	cmd := exec.Command(py, "-c", botocoreScript, e.srv.URL)
	cmd.Env = botocoreEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v %s", err, stderr.String())
	}
	var got map[string][]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	want := map[string][]any{
		"missing": {"QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "The specified queue does not exist.", 400.0},
		"handle":  {"ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", `The input receipt handle "bogus" is not a valid receipt handle.`, 404.0},
		"max":     {"ClientError", "InvalidParameterValue", "InvalidParameterValueException", "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", 400.0},
		"batch":   {"BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "BatchEntryIdsNotDistinct", "Id a repeated.", 400.0},
		"movetask": {"ResourceNotFoundException", "ResourceNotFoundException", "ResourceNotFoundException",
			"The resource that you specified for the SourceArn parameter doesn't exist.", 404.0},
	}
	for k, w := range want {
		if g, _ := json.Marshal(got[k]); string(g) != mustJSON(w) {
			t.Errorf("%s: got %s, want %s", k, g, mustJSON(w))
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
