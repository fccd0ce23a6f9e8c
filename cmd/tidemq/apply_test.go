package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"

	apisns "github.com/tidemq/tidemq/api/sns"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/engine"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// testServer is a tidemq server in process, wired as 'tidemq serve' wires
// it: SQS and SNS on one handler, the trigger admin API beside them.
type testServer struct {
	url      string
	eng      *engine.Engine
	triggers *trigger.Manager
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	topics, err := topicstore.Open(topicstore.Options{Broker: eng})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := any(topics).(io.Closer); ok {
		t.Cleanup(func() { c.Close() })
	}
	m, err := trigger.NewManager(trigger.Options{Broker: eng, WaitTimeSeconds: -1, AllowCommands: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	mux := http.NewServeMux()
	mux.Handle(trigger.APIPath, m.Handler())
	mux.Handle(trigger.APIPath+"/", m.Handler())
	mux.Handle("/", apisns.Route(apisns.NewHandler(apisns.Config{Service: topics}),
		sqs.NewHandler(sqs.Config{Broker: eng, Region: "us-east-1", AccountID: "000000000000"})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	return &testServer{url: srv.URL, eng: eng, triggers: m}
}

// snsClient is an SDK SNS client of the test server.
func (s *testServer) snsClient() *awssns.Client {
	return awssns.New(awssns.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.url),
		Credentials: aws.AnonymousCredentials{}})
}

// trigger reads a trigger through the admin API.
func (s *testServer) trigger(t *testing.T, name string) *trigger.Status {
	t.Helper()
	resp, err := http.Get(s.url + trigger.APIPath + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET trigger %s: %s", name, resp.Status)
	}
	var st trigger.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// TestApplyCommandTopology applies testdata/apply-full.yaml over the SQS
// and SNS APIs and the trigger admin API of an in-process server, checks
// the result with SDK clients, applies again (all unchanged), then puts
// drift back.
func TestApplyCommandTopology(t *testing.T) {
	// The fixture has lint errors on purpose (a disabled trigger on a
	// queue a topic feeds): this test is about applying, so it skips the
	// lint, through the variable (TestApplyLintsFirst tests the lint).
	t.Setenv("TIDEMQ_NO_LINT", "true")
	s := newTestServer(t)
	ctx := context.Background()
	data, err := os.ReadFile("../../topology/testdata/apply-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tidemq.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(data), "FUNCTION_URL", "http://127.0.0.1:1/fn")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(newApplyCommand(), file, "--endpoint", s.url)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"+ topic events (create)\n",
		"+ subscription events -> sqs:orders (create)\n",
		"+ trigger order-worker.orders (create)\n",
		"! trigger reporter.reports (not applied: function reporter has no url or command to stand for it locally)\n",
		"! alarm orders-dlq-depth (not applied: the built-in alarms' thresholds are set when the server starts: use 'tidemq serve --config' (or --alarms-config))\n",
		"12 to create, 0 to update, 0 unchanged, 6 not applied\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// What exists, through the SDK.
	cl := s.snsClient()
	events := "arn:aws:sns:us-east-1:000000000000:events"
	ta, err := cl.GetTopicAttributes(ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(events)})
	if err != nil || ta.Attributes["DisplayName"] != "Order events" {
		t.Fatalf("events: %v %v", ta, err)
	}
	fa, err := cl.GetTopicAttributes(ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String("arn:aws:sns:us-east-1:000000000000:audit.fifo")})
	if err != nil || fa.Attributes["FifoTopic"] != "true" || fa.Attributes["ContentBasedDeduplication"] != "true" {
		t.Fatalf("audit.fifo: %v %v", fa, err)
	}
	subs, err := cl.ListSubscriptionsByTopic(ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: aws.String(events)})
	if err != nil || len(subs.Subscriptions) != 2 {
		t.Fatalf("subscriptions: %+v %v", subs, err)
	}
	var ordersSub string
	for _, sub := range subs.Subscriptions {
		a, err := cl.GetSubscriptionAttributes(ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: sub.SubscriptionArn})
		if err != nil {
			t.Fatal(err)
		}
		switch aws.ToString(sub.Endpoint) {
		case "arn:aws:sqs:us-east-1:000000000000:orders":
			ordersSub = aws.ToString(sub.SubscriptionArn)
			if a.Attributes["RawMessageDelivery"] != "true" || a.Attributes["FilterPolicy"] != `{"type":["order"]}` ||
				a.Attributes["RedrivePolicy"] != `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq"}` {
				t.Errorf("orders subscription: %v", a.Attributes)
			}
		case "arn:aws:sqs:us-east-1:000000000000:reports":
			if a.Attributes["FilterPolicyScope"] != "MessageBody" || a.Attributes["RawMessageDelivery"] != "false" {
				t.Errorf("reports subscription: %v", a.Attributes)
			}
		default:
			t.Errorf("unexpected subscription %s", aws.ToString(sub.Endpoint))
		}
	}
	st := s.trigger(t, "order-worker.orders")
	if st.Target.URL != "http://127.0.0.1:1/fn" || st.BatchSize != 5 || st.ScalingConfig.MaximumConcurrency != 3 || st.Timeout != 30 || st.State != "Enabled" {
		t.Errorf("order-worker: %+v", st)
	}
	if st := s.trigger(t, "auditor.audit.fifo"); st.State != "Disabled" || st.Target.Command[0] != "true" {
		t.Errorf("auditor: %+v", st)
	}

	// Again: nothing to do.
	out, err = run(newApplyCommand(), file, "--endpoint", s.url)
	if err != nil || !strings.Contains(out, "0 to create, 0 to update, 12 unchanged, 6 not applied\n") {
		t.Fatalf("second apply: %v\n%s", err, out)
	}

	// Drift, through the SDK and the admin API, is planned and put back.
	if _, err := cl.SetTopicAttributes(ctx, &awssns.SetTopicAttributesInput{TopicArn: aws.String(events), AttributeName: aws.String("DisplayName"), AttributeValue: aws.String("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.SetSubscriptionAttributes(ctx, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(ordersSub), AttributeName: aws.String("RawMessageDelivery"), AttributeValue: aws.String("false")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.triggers.Update(ctx, "order-worker.orders", []byte(`{"Timeout":10,"Target":{"URL":"http://127.0.0.1:2/","Headers":{"Authorization":"Bearer drifted"}}}`)); err != nil {
		t.Fatal(err)
	}
	out, err = run(newApplyCommand(), file, "--endpoint", s.url, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"~ topic events (update)\n    DisplayName: x -> Order events\n",
		"~ subscription events -> sqs:orders (update)\n    RawMessageDelivery: false -> true\n",
		"~ trigger order-worker.orders (update)\n    Secrets: (hidden, digest ",
		"\n    Target: http://127.0.0.1:2/ -> http://127.0.0.1:1/fn\n    Timeout: 10 -> 30\n",
		"0 to create, 3 to update, 9 unchanged, 6 not applied\ndry run: nothing changed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("drift plan lacks %q:\n%s", want, out)
		}
	}
	if _, err := run(newApplyCommand(), file, "--endpoint", s.url); err != nil {
		t.Fatal(err)
	}
	a, _ := cl.GetSubscriptionAttributes(ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(ordersSub)})
	ta, _ = cl.GetTopicAttributes(ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(events)})
	if st := s.trigger(t, "order-worker.orders"); a.Attributes["RawMessageDelivery"] != "true" || ta.Attributes["DisplayName"] != "Order events" ||
		st.Timeout != 30 || st.Target.URL != "http://127.0.0.1:1/fn" {
		t.Errorf("not put back: %v %v %+v", a.Attributes, ta.Attributes, st)
	}
	// The secret too: the server's digest is that of the file's header.
	local := trigger.Config{Name: "order-worker.orders", Target: trigger.Target{URL: "http://127.0.0.1:1/fn", Headers: map[string]string{"Authorization": "Bearer local"}}}
	if st := s.trigger(t, "order-worker.orders"); st.SecretsDigest != trigger.SecretsDigest(&local) || st.Target.Headers["Authorization"] != trigger.Redacted {
		t.Errorf("secret not put back: %+v", st)
	}
	out, err = run(newApplyCommand(), file, "--endpoint", s.url)
	if err != nil || !strings.Contains(out, "0 to create, 0 to update, 12 unchanged, 6 not applied\n") || strings.Contains(out, "Bearer") {
		t.Fatalf("apply after the drift was put back: %v\n%s", err, out)
	}
}
