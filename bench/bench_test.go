package bench_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq/bench"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"

	apisns "github.com/tidemq/tidemq/api/sns"
	apisqs "github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/sns"
)

// newServer is the SQS API over an in-memory engine, for the test's life.
func newServer(t *testing.T) *httptest.Server {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := engine.Open(engine.Options{Store: mem.New(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(apisqs.NewHandler(apisqs.Config{Broker: e, Logger: quiet}))
	t.Cleanup(func() { srv.Close(); e.Close() })
	return srv
}

// TestScenariosMoveEveryMessageOnce is the smoke run CI does: every
// scenario, small, against an in-process server, must account for every
// message. It checks correctness, not speed.
func TestScenariosMoveEveryMessageOnce(t *testing.T) {
	srv := newServer(t)
	sdk := bench.SDKClient{C: sqs.New(sqs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
	})}
	for name, client := range map[string]bench.Client{"raw": bench.NewRawClient(srv.URL, 8), "sdk": sdk} {
		t.Run(name, func(t *testing.T) { runEveryScenario(t, client) })
	}
}

func runEveryScenario(t *testing.T, client bench.Client) {
	for _, s := range bench.Scenarios {
		count := 300
		if s == "longpoll" {
			count = 5
		}
		res, err := bench.Run(context.Background(), client, bench.Config{Scenario: s, Clients: 4, Count: count, Groups: 8})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if !res.OK() || res.Messages != int64(count) {
			t.Errorf("%s: %+v", s, res)
		}
	}
	mixed, err := bench.Run(context.Background(), client, bench.Config{Scenario: "mixed", Clients: 4, Rate: 200, Duration: time.Second})
	if err != nil || !mixed.OK() || mixed.Messages < 50 {
		t.Errorf("mixed: %+v, %v", mixed, err)
	}
	depth, err := bench.Run(context.Background(), client, bench.Config{Scenario: "depth", Clients: 4, Prefill: 500, Count: 100})
	if err != nil || !depth.OK() || depth.Messages != 100 {
		t.Errorf("depth: %+v, %v", depth, err)
	}
	if _, err := bench.Run(context.Background(), client, bench.Config{Scenario: "nope"}); err == nil {
		t.Error("unknown scenario accepted")
	}
}

// TestRawClientChecksAnswers: the raw client must notice a server that
// corrupts bodies (wrong MD5) or answers with an error, not count it as a
// success.
func TestRawClientChecksAnswers(t *testing.T) {
	answers := map[string]string{
		"AmazonSQS.SendMessage":    `{"MessageId":"1","MD5OfMessageBody":"00000000000000000000000000000000"}`,
		"AmazonSQS.ReceiveMessage": `{"Messages":[{"MessageId":"1","ReceiptHandle":"h","MD5OfBody":"00000000000000000000000000000000","Body":"m1 x"}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a, ok := answers[r.Header.Get("X-Amz-Target")]; ok {
			_, _ = io.WriteString(w, a)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"no such queue"}`)
	}))
	defer srv.Close()
	c := bench.NewRawClient(srv.URL, 2)
	ctx := context.Background()
	if err := c.Send(ctx, srv.URL+"/q", []bench.Outgoing{{Body: "m1 x"}}, false); err == nil || !strings.Contains(err.Error(), "MD5") {
		t.Errorf("send with a wrong MD5: %v", err)
	}
	if _, err := c.Receive(ctx, srv.URL+"/q", 10, 0); err == nil || !strings.Contains(err.Error(), "MD5") {
		t.Errorf("receive with a wrong MD5: %v", err)
	}
	err := c.Delete(ctx, srv.URL+"/q", []string{"h"}, true)
	var apiErr *bench.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || err.Error() != "QueueDoesNotExist (HTTP 400): no such queue" {
		t.Errorf("error answer: %v", err)
	}
}

// TestRawClientHTTP drives the raw client's own HTTP/1.1 code against
// answers net/http's server writes in its different ways: with a length,
// chunked, with Connection: close, and after the server dropped the idle
// connection.
func TestRawClientHTTP(t *testing.T) {
	const answer = `{"QueueUrl":"http://h/000000000000/q"}`
	var mode atomic.Value
	mode.Store("length")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Amz-Target") != "AmazonSQS.CreateQueue" || !strings.Contains(string(b), `"QueueName":"q"`) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		switch mode.Load() {
		case "chunked":
			_, _ = io.WriteString(w, answer[:10])
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, answer[10:])
		case "close":
			w.Header().Set("Connection", "close")
			_, _ = io.WriteString(w, answer)
		default:
			_, _ = io.WriteString(w, answer)
		}
	}))
	defer srv.Close()
	c := bench.NewRawClient(srv.URL, 2)
	for _, m := range []string{"length", "chunked", "close", "length", "dropped", "chunked"} {
		mode.Store(m)
		if m == "dropped" {
			srv.CloseClientConnections()
		}
		for i := 0; i < 3; i++ {
			url, err := c.CreateQueue(context.Background(), "q", nil)
			if err != nil || url != "http://h/000000000000/q" {
				t.Fatalf("%s, request %d: %q, %v", m, i, url, err)
			}
		}
	}
}

// TestRawClientEscapes: bodies with quotes, backslashes, control characters
// and non-ASCII text arrive as sent (the server checks the MD5 the client
// computes from the same string).
func TestRawClientEscapes(t *testing.T) {
	srv := newServer(t)
	c := bench.NewRawClient(srv.URL, 2)
	ctx := context.Background()
	url, err := c.CreateQueue(ctx, "esc", map[string]string{"VisibilityTimeout": "30"})
	if err != nil {
		t.Fatal(err)
	}
	body := "he said \"hi\" \\ \n\t\r ☃ é 𝄞 </>&"
	if err := c.Send(ctx, url, []bench.Outgoing{{Body: body}}, false); err != nil {
		t.Fatal(err)
	}
	got, err := c.Receive(ctx, url, 10, 0)
	if err != nil || len(got) != 1 || got[0].Body != body {
		t.Fatalf("received %+v, %v", got, err)
	}
	if err := c.Delete(ctx, url, []string{got[0].Handle}, false); err != nil {
		t.Fatal(err)
	}
	if v, n, err := c.Counts(ctx, url); err != nil || v != 0 || n != 0 {
		t.Fatalf("counts %d %d %v", v, n, err)
	}
}

// brokenReceives passes everything through except Receive, which fails: a
// server that went away, or a queue deleted under the run.
type brokenReceives struct {
	bench.Client
	calls atomic.Int64
}

func (b *brokenReceives) Receive(context.Context, string, int, int) ([]bench.Received, error) {
	b.calls.Add(1)
	return nil, errors.New("connection refused")
}

// TestRunGivesUpWhenReceivesKeepFailing: a scenario whose receives keep
// failing must end with the error after a bounded number of tries, never
// spin on it forever (it once did, at full CPU, after its server died).
func TestRunGivesUpWhenReceivesKeepFailing(t *testing.T) {
	srv := newServer(t)
	for _, cfg := range []bench.Config{
		{Scenario: "send", Clients: 2, Count: 20},
		{Scenario: "receive-batch", Clients: 2, Count: 20},
		{Scenario: "fifo", Clients: 2, Count: 20, Groups: 2},
		{Scenario: "depth", Clients: 2, Prefill: 10, Count: 20},
	} {
		t.Run(cfg.Scenario, func(t *testing.T) {
			t.Parallel()
			client := &brokenReceives{Client: bench.NewRawClient(srv.URL, 2)}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := bench.Run(ctx, client, cfg)
			if err == nil || !strings.Contains(err.Error(), "connection refused") || ctx.Err() != nil {
				t.Errorf("err %v (context %v), want the receive error before the deadline", err, ctx.Err())
			}
			if n := client.calls.Load(); n > int64(cfg.Clients)*10 {
				t.Errorf("%d receives, want at most 10 per client", n)
			}
		})
	}
	client := &brokenReceives{Client: bench.NewRawClient(srv.URL, 2)}
	res, err := bench.Run(context.Background(), client, bench.Config{Scenario: "mixed", Clients: 2, Rate: 50, Duration: 300 * time.Millisecond})
	if err == nil && res.OK() {
		t.Errorf("mixed with failing receives passed: %+v", res)
	}
}

// TestSNSScenarios runs the SNS scenarios, small, against an in-process
// server with topics: every publish must reach every subscription once.
func TestSNSScenarios(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := engine.Open(engine.Options{Store: mem.New(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	topics, err := sns.Open(sns.Options{Broker: e, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(apisns.Route(apisns.NewHandler(apisns.Config{Service: topics, Logger: quiet}),
		apisqs.NewHandler(apisqs.Config{Broker: e, Logger: quiet})))
	t.Cleanup(func() { srv.Close(); topics.Close(); e.Close() })
	client := bench.NewRawClient(srv.URL, 8)
	for _, s := range bench.SNSScenarios {
		res, err := bench.Run(context.Background(), client, bench.Config{Scenario: s, Clients: 4, Count: 100})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		subs := int64(1)
		if s == "sns-fanout" {
			subs = 10
		}
		if !res.OK() || res.Messages != 100 || res.Deliveries != 100*subs {
			t.Errorf("%s: %+v", s, res)
		}
	}
	if topics.Stats().Delivered != 1200 {
		t.Errorf("the topic service delivered %d messages, want 1200", topics.Stats().Delivered)
	}
	sdk := bench.SDKClient{C: sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})}
	if _, err := bench.Run(context.Background(), sdk, bench.Config{Scenario: "sns", Count: 1}); err == nil {
		t.Error("the SDK client ran an SNS scenario it cannot speak")
	}
}

// createRecorder is a client that remembers the attributes of the queues
// it creates, by name.
type createRecorder struct {
	bench.Client
	attrs map[string]map[string]string
}

func (c *createRecorder) CreateQueue(ctx context.Context, name string, attrs map[string]string) (string, error) {
	c.attrs[name] = attrs
	return c.Client.CreateQueue(ctx, name, attrs)
}

// With MaxReceiveCount, a scenario's queue gets a dead-letter queue of
// its kind, named after it, whose ARN (read from the server) and the
// count are its redrive policy; both are gone after the run.
func TestScenariosWithADeadLetterQueue(t *testing.T) {
	srv := newServer(t)
	sdk := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	rec := &createRecorder{Client: bench.NewRawClient(srv.URL, 4), attrs: map[string]map[string]string{}}
	for _, s := range []string{"receive-batch", "fifo"} {
		res, err := bench.Run(context.Background(), rec, bench.Config{Scenario: s, Queue: "dl", Clients: 4, Count: 200, Groups: 4, MaxReceiveCount: 3})
		if err != nil || !res.OK() || res.Messages != 200 {
			t.Fatalf("%s: %+v, %v", s, res, err)
		}
	}
	var main, dlqs []string
	for name, attrs := range rec.attrs {
		if strings.Contains(name, "-dlq") {
			dlqs = append(dlqs, name)
			continue
		}
		main = append(main, name)
		want := strings.TrimSuffix(name, ".fifo") + "-dlq"
		if strings.HasSuffix(name, ".fifo") {
			want += ".fifo"
		}
		policy := fmt.Sprintf(`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:%s","maxReceiveCount":3}`, want)
		if attrs["RedrivePolicy"] != policy {
			t.Errorf("%s's redrive policy is %q, want %q", name, attrs["RedrivePolicy"], policy)
		}
		if _, ok := rec.attrs[want]; !ok {
			t.Errorf("no dead-letter queue %s was created for %s", want, name)
		}
	}
	if len(main) != 2 || len(dlqs) != 2 {
		t.Fatalf("created %v and %v, want two queues and two dead-letter queues", main, dlqs)
	}
	out, err := sdk.ListQueues(context.Background(), &sqs.ListQueuesInput{})
	if err != nil || len(out.QueueUrls) != 0 {
		t.Fatalf("after the runs the server holds %v (%v), want no queue", out.QueueUrls, err)
	}
}
