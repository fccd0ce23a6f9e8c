package sns_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq"
	apisns "github.com/tidemq/tidemq/api/sns"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// The crash test publishes in a child process (this test binary, run
// again) whose broker kills the process in the middle of a fan-out, then
// reopens the data directory and checks that every queue got every
// acknowledged-or-recorded publish exactly once: the outbox record written
// before the first delivery is delivered again at Open, repeats to FIFO
// queues carry the original deduplication id, and finished deliveries are
// not repeated.

const (
	crashDirEnv  = "TIDEMQ_SNS_CRASH_DIR"
	crashModeEnv = "TIDEMQ_SNS_CRASH_MODE"
	crashExit    = 3
)

// crashBroker exits the process during the publish that follows arm():
// "before" at its first delivery, "partial" when it delivers to fb.fifo,
// after fa.fifo has its copy.
type crashBroker struct {
	tidemq.Broker
	mode   string
	armed  atomic.Bool
	faDone chan struct{}
	once   sync.Once
}

func (b *crashBroker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if !b.armed.Load() {
		return b.Broker.SendMessages(ctx, p)
	}
	switch {
	case b.mode == "before":
		os.Exit(crashExit)
	case p.Queue == "fb.fifo":
		<-b.faDone
		os.Exit(crashExit)
	}
	res, err := b.Broker.SendMessages(ctx, p)
	if p.Queue == "fa.fifo" {
		b.once.Do(func() { close(b.faDone) })
	}
	return res, err
}

// togetherCrashBroker is a crashBroker that sends to several queues in
// one write (tidemq.QueuesSender), and exits the process in the publish
// that follows arm(): "together-before" before the write, "together-after"
// once it returned, before the publish is answered.
type togetherCrashBroker struct{ *crashBroker }

func (b togetherCrashBroker) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	if b.armed.Load() && b.mode == "together-before" {
		os.Exit(crashExit)
	}
	res, err := tidemq.SendToQueues(ctx, b.Broker, ps)
	if b.armed.Load() && b.mode == "together-after" {
		os.Exit(crashExit)
	}
	return res, err
}

// openDurable serves an engine and a topic service kept in one Pebble
// store in dir, as tidemq serve keeps them.
func openDurable(t *testing.T, dir string, wrap func(tidemq.Broker) tidemq.Broker, opts ...func(*sns.Options)) (*env, func()) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	st, err := pebble.Open(dir, pebble.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	shared := storage.Share(st)
	eng, err := engine.Open(engine.Options{Store: shared, Region: "us-east-1", AccountID: account, SweepInterval: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	var broker tidemq.Broker = eng
	if wrap != nil {
		broker = wrap(eng)
	}
	o := sns.Options{Broker: broker, Region: "us-east-1", AccountID: account, Store: shared.Share(), Logger: log}
	for _, f := range opts {
		f(&o)
	}
	svc, err := sns.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(apisns.Route(apisns.NewHandler(apisns.Config{Service: svc, Logger: log}), sqs.NewHandler(sqs.Config{Broker: eng, Logger: log})))
	creds := credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")
	e := &env{t: t, srv: srv, svc: svc, ctx: context.Background(),
		sns: awssns.New(awssns.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: creds,
			Retryer: retry.AddWithMaxAttempts(retry.NewStandard(), 1)}),
		sqs: awssqs.New(awssqs.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: creds,
			Retryer: retry.AddWithMaxAttempts(retry.NewStandard(), 1)}),
	}
	return e, func() {
		srv.Close()
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	}
}

// crashTopology creates (idempotently) a standard topic fanning out to
// queues a and b, and a FIFO topic fanning out to fa.fifo and fb.fifo, all
// raw. It returns the topic ARNs.
func crashTopology(e *env) (std, fifo string) {
	std = e.topic("std", nil)
	fifo = e.topic("ord.fifo", map[string]string{"FifoTopic": "true"})
	for _, q := range []string{"a", "b"} {
		_, arn := e.queue(q, nil)
		e.subscribe(std, arn, map[string]string{"RawMessageDelivery": "true"})
	}
	for _, q := range []string{"fa.fifo", "fb.fifo"} {
		_, arn := e.queue(q, map[string]string{"FifoQueue": "true"})
		e.subscribe(fifo, arn, map[string]string{"RawMessageDelivery": "true"})
	}
	return std, fifo
}

// TestCrashChild is the child's side; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	dir, mode := os.Getenv(crashDirEnv), os.Getenv(crashModeEnv)
	if dir == "" {
		t.Skip("run by TestCrashDuringFanOut")
	}
	cb := &crashBroker{mode: mode, faDone: make(chan struct{})}
	e, _ := openDurable(t, dir, func(b tidemq.Broker) tidemq.Broker {
		cb.Broker = b
		if mode == "together-before" || mode == "together-after" {
			return togetherCrashBroker{cb}
		}
		return cb
	})
	std, fifo := crashTopology(e)
	pub := func(topic, msg string) {
		in := &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(msg)}
		if topic == fifo {
			in.MessageGroupId, in.MessageDeduplicationId = aws.String("g"), aws.String(msg)
		}
		if _, err := e.sns.Publish(e.ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	switch mode {
	case "before":
		pub(std, "s1")
		pub(fifo, "f1")
		cb.armed.Store(true)
		pub(std, "s2")
	case "partial":
		pub(fifo, "f2")
		cb.armed.Store(true)
		pub(fifo, "f3")
	case "together-before":
		pub(std, "t1")
		cb.armed.Store(true)
		pub(std, "t2")
	case "together-after":
		cb.armed.Store(true)
		pub(std, "t3")
	}
	t.Fatal("the child did not crash")
}

func runCrashChild(t *testing.T, dir, mode string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashModeEnv+"="+mode)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != crashExit {
		t.Fatalf("child (%s) ended with %v, want exit status %d\n%s", mode, err, crashExit, out)
	}
}

// drain receives and deletes everything in a queue, in order.
func (e *env) drain(name string) []string {
	e.t.Helper()
	url := e.srv.URL + "/" + account + "/" + name
	var got []string
	for {
		out, err := e.sqs.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			e.t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return got
		}
		for _, m := range out.Messages {
			got = append(got, aws.ToString(m.Body))
			if _, err := e.sqs.DeleteMessage(e.ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}

func TestCrashDuringFanOut(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()

	// 1. The process dies at the first delivery of s2: only the outbox has it.
	runCrashChild(t, dir, "before")
	e, closeAll := openDurable(t, dir, nil)
	if st := e.svc.Stats(); st.Recovered != 2 || st.Delivered != 2 {
		t.Fatalf("after the first crash: %+v", st)
	}
	for _, q := range []string{"a", "b"} {
		got := e.drain(q)
		sort.Strings(got)
		if fmt.Sprint(got) != "[s1 s2]" {
			t.Fatalf("queue %s got %v, want [s1 s2]", q, got)
		}
	}
	closeAll()

	// 2. The process dies after fa.fifo got f3 and before fb.fifo did.
	runCrashChild(t, dir, "partial")
	e, closeAll = openDurable(t, dir, nil)
	defer closeAll()
	if st := e.svc.Stats(); st.Recovered < 1 || st.Recovered > 2 {
		t.Fatalf("after the second crash: %+v", st)
	}
	for _, q := range []string{"fa.fifo", "fb.fifo"} {
		if got := e.drain(q); fmt.Sprint(got) != "[f1 f2 f3]" {
			t.Fatalf("queue %s got %v, want [f1 f2 f3]", q, got)
		}
	}
	for _, q := range []string{"a", "b"} {
		if got := e.drain(q); len(got) != 0 {
			t.Fatalf("queue %s got %v again", q, got)
		}
	}
}

// TestCrashDuringFanOutInOneWrite: a fan-out written in one write of the
// engine, without an outbox record (sns/together.go), is in every queue or
// in none after a crash: a crash before the write leaves nothing of the
// unanswered publish and nothing to recover; a crash after it, before the
// answer, leaves it once in each queue and nothing to deliver again.
func TestCrashDuringFanOutInOneWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	for _, c := range []struct{ mode, want string }{{"together-before", "[t1]"}, {"together-after", "[t3]"}} {
		runCrashChild(t, dir, c.mode)
		e, closeAll := openDurable(t, dir, nil)
		if st := e.svc.Stats(); st.Recovered != 0 {
			t.Fatalf("after the crash %s: %+v, want nothing recovered", c.mode, st)
		}
		for _, q := range []string{"a", "b"} {
			if got := fmt.Sprint(e.drain(q)); got != c.want {
				t.Fatalf("after the crash %s queue %s got %v, want %s", c.mode, q, got, c.want)
			}
		}
		closeAll()
	}
}

// failingBroker fails every delivery to queue b with a server-side error.
type failingBroker struct{ tidemq.Broker }

func (b failingBroker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if p.Queue == "b" {
		return nil, tidemq.Errorf(tidemq.ErrInternalFailure, "disk on fire")
	}
	return b.Broker.SendMessages(ctx, p)
}

// A delivery that keeps failing for a server-side reason stays in the
// outbox, retried in the background (AWS's SQS policy: three immediate
// retries, then with delays); a shutdown leaves it there and the next Open
// delivers it. The other queue is not delivered twice.
func TestFailedDeliveryIsRetriedAfterRestart(t *testing.T) {
	dir := t.TempDir()
	clk := clocktest.New(time.Now())
	e, closeAll := openDurable(t, dir, func(b tidemq.Broker) tidemq.Broker { return failingBroker{b} },
		func(o *sns.Options) { o.Clock = clk })
	std, _ := crashTopology(e)
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(std), Message: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	if !clk.WaitForTimers(1, 5*time.Second) { // the immediate retries failed; the next waits 1 s
		t.Fatal("no retry scheduled")
	}
	if st := e.svc.Stats(); st.Retries != 3 || st.Delivered != 1 {
		t.Fatalf("stats = %+v", st)
	}
	if got := e.drain("a"); fmt.Sprint(got) != "[m]" {
		t.Fatalf("queue a got %v", got)
	}
	closeAll()

	e, closeAll = openDurable(t, dir, nil)
	defer closeAll()
	if got := e.drain("b"); fmt.Sprint(got) != "[m]" {
		t.Fatalf("queue b got %v after the restart", got)
	}
	if got := e.drain("a"); len(got) != 0 {
		t.Fatalf("queue a got %v again", got)
	}
}
