package sns_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// The AWS CLI (botocore, SNS over Query) against the routed server, when it
// is installed.
func TestAWSCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the AWS CLI")
	}
	cli, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the AWS CLI is not installed")
	}
	e := newEnv(t)
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env, "AWS_ACCESS_KEY_ID=AKIDCLI", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_MAX_ATTEMPTS=1", "AWS_PAGER=")
	run := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"sns", "--endpoint-url", e.srv.URL, "--output", "json"}, args...)...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("aws sns %s: %v\n%s", args[0], err, stderr.String())
		}
		var out map[string]any
		if stdout.Len() > 0 {
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("aws sns %s output %q: %v", args[0], stdout.String(), err)
			}
		}
		return out
	}
	qURL, qARN := e.queue("cli-q", nil)
	topic, _ := run("create-topic", "--name", "cli-topic")["TopicArn"].(string)
	if !strings.HasSuffix(topic, ":cli-topic") {
		t.Fatalf("create-topic gave %q", topic)
	}
	sub, _ := run("subscribe", "--topic-arn", topic, "--protocol", "sqs", "--notification-endpoint", qARN,
		"--attributes", "RawMessageDelivery=false", "--return-subscription-arn")["SubscriptionArn"].(string)
	if !strings.HasPrefix(sub, topic+":") {
		t.Fatalf("subscribe gave %q", sub)
	}
	pub := run("publish", "--topic-arn", topic, "--message", "from the cli", "--subject", "cli",
		"--message-attributes", `{"color":{"DataType":"String","StringValue":"red"}}`)
	if pub["MessageId"] == "" {
		t.Fatalf("publish gave %v", pub)
	}
	msgs := e.receive(qURL, 10)
	if len(msgs) != 1 {
		t.Fatalf("queue got %d messages", len(msgs))
	}
	var n map[string]any
	if err := json.Unmarshal([]byte(aws.ToString(msgs[0].Body)), &n); err != nil || n["Message"] != "from the cli" || n["Subject"] != "cli" || n["MessageId"] != pub["MessageId"] {
		t.Fatalf("envelope %v: %v", n, err)
	}
	lt := run("list-topics")
	if topics, _ := lt["Topics"].([]any); len(topics) != 1 {
		t.Fatalf("list-topics gave %v", lt)
	}
	ga := run("get-subscription-attributes", "--subscription-arn", sub)
	if attrs, _ := ga["Attributes"].(map[string]any); attrs["Endpoint"] != qARN {
		t.Fatalf("get-subscription-attributes gave %v", ga)
	}
	run("tag-resource", "--resource-arn", topic, "--tags", "Key=team,Value=cli", "Key=env,Value=ci")
	tags, _ := run("list-tags-for-resource", "--resource-arn", topic)["Tags"].([]any)
	if len(tags) != 2 || fmt.Sprint(tags[0]) != "map[Key:env Value:ci]" {
		t.Fatalf("list-tags-for-resource gave %v", tags)
	}
	run("untag-resource", "--resource-arn", topic, "--tag-keys", "team")
	if tags, _ := run("list-tags-for-resource", "--resource-arn", topic)["Tags"].([]any); len(tags) != 1 {
		t.Fatalf("after untag-resource: %v", tags)
	}

	h := newHook(t, nil)
	if arn := run("subscribe", "--topic-arn", topic, "--protocol", "http", "--notification-endpoint", h.srv.URL)["SubscriptionArn"]; arn != "pending confirmation" {
		t.Fatalf("subscribe (http) gave %v", arn)
	}
	c := jsonBody(t, h.next(t))
	conf, _ := run("confirm-subscription", "--topic-arn", topic, "--token", c["Token"].(string))["SubscriptionArn"].(string)
	if !strings.HasPrefix(conf, topic+":") {
		t.Fatalf("confirm-subscription gave %q", conf)
	}
	run("delete-topic", "--topic-arn", topic)
}
