package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	apisqs "github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage/mem"
)

type fixture struct {
	t     *testing.T
	eng   *engine.Engine
	clock *clocktest.Clock
	srv   *httptest.Server
	con   *Console
	// firing, when set, is reported by the alarms as firing.
	firing map[string]bool
	topics *fakeTopics
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: clocktest.New(time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)), firing: map[string]bool{}, topics: &fakeTopics{}}
	eng, err := engine.Open(engine.Options{Store: mem.New(), Clock: f.clock, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	f.eng = eng
	all := func() []alarms.Alarm {
		var out []alarms.Alarm
		for q, on := range f.firing {
			st := alarms.StateOK
			if on {
				st = alarms.StateFiring
			}
			out = append(out, alarms.Alarm{Alarm: alarms.DLQNotEmpty, Queue: q, State: st, Summary: "test"})
		}
		return out
	}
	c := New(Options{Broker: eng, Clock: f.clock, Region: "us-east-1", AccountID: "000000000000", Topics: f.topics,
		Alarms: all,
		// As the server wires it (alarms.Evaluator.Shown): the firing
		// alarms and those of the named queues.
		AlarmsFor: func(queues []string) []alarms.Alarm {
			var out []alarms.Alarm
			for _, a := range all() {
				if a.State == alarms.StateFiring || slices.Contains(queues, a.Queue) {
					out = append(out, a)
				}
			}
			return out
		},
		SQS: apisqs.NewHandler(apisqs.Config{Broker: eng, Region: "us-east-1", AccountID: "000000000000"})})
	t.Cleanup(c.Wait)
	f.con = c
	mux := http.NewServeMux()
	mux.Handle("GET "+Path+"/", Assets())
	mux.Handle("GET "+APIPath+"/", c.API())
	mux.Handle("POST "+APIPath+"/", c.API())
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) createQueue(name string, attrs map[string]string) *tidemq.QueueInfo {
	f.t.Helper()
	q, err := f.eng.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: name, Attributes: attrs})
	if err != nil {
		f.t.Fatal(err)
	}
	return q
}

func (f *fixture) send(queue, body string, delay *int) {
	f.t.Helper()
	res, err := f.eng.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue,
		Entries: []tidemq.SendEntry{{ID: "1", Body: body, DelaySeconds: delay}}})
	if err != nil || res[0].Err != nil {
		f.t.Fatalf("send: %v %v", err, res)
	}
}

func (f *fixture) receive(queue string, visibility int) []*tidemq.Message {
	f.t.Helper()
	ten, wait := 10, 0
	ms, err := f.eng.ReceiveMessages(context.Background(), tidemq.ReceiveMessagesParams{Queue: queue,
		MaxNumberOfMessages: &ten, VisibilityTimeout: &visibility, WaitTimeSeconds: &wait,
		Client: tidemq.NewClientInfo("10.0.0.7:5000", "aws-sdk-go-v2/1.0 app/billing-worker", "AKIDWORKER")})
	if err != nil {
		f.t.Fatal(err)
	}
	return ms
}

// get decodes the JSON answer of a GET, checking its status.
func (f *fixture) get(path string, want int, out any) {
	f.t.Helper()
	resp, err := http.Get(f.srv.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	f.decode(resp, "GET "+path, want, out)
}

func (f *fixture) post(path, body string, want int, out any) {
	f.t.Helper()
	resp, err := http.Post(f.srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	f.decode(resp, "POST "+path, want, out)
}

func (f *fixture) decode(resp *http.Response, what string, want int, out any) {
	f.t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		f.t.Fatalf("%s: %d %s, want %d", what, resp.StatusCode, b, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("%s: Content-Type %q", what, ct)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			f.t.Fatalf("%s: %v in %s", what, err, b)
		}
	}
}

type apiError struct{ Error, Code string }

// deadLetterSetup makes "orders" redrive to "orders-dlq" after one receive
// and dead-letters one message, received by a named worker.
func (f *fixture) deadLetterSetup(body string) {
	f.t.Helper()
	dlq := f.createQueue("orders-dlq", nil)
	f.createQueue("orders", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlq.ARN + `","maxReceiveCount":"1"}`})
	f.send("orders", body, nil)
	if got := f.receive("orders", 5); len(got) != 1 {
		f.t.Fatalf("first receive: %d messages", len(got))
	}
	f.clock.Advance(6 * time.Second)
	if got := f.receive("orders", 5); len(got) != 0 {
		f.t.Fatalf("the second receive got %d messages; the message should have moved to the DLQ", len(got))
	}
}

func TestOverviewDeadLetterQueuesFirstWithAlarmsAndDepth(t *testing.T) {
	f := newFixture(t)
	f.createQueue("alpha", nil)
	dlq := f.createQueue("zz-dlq", nil)
	f.createQueue("beta", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlq.ARN + `","maxReceiveCount":"4"}`})
	f.send("beta", "visible", nil)
	f.send("beta", "in flight", nil)
	f.send("beta", "old", nil)
	delay := 60
	f.send("beta", "delayed", &delay)
	f.clock.Advance(10 * time.Second)
	f.receive("beta", 30) // receives the three visible ones
	f.send("beta", "fresh", nil)
	f.firing["zz-dlq"] = true
	f.firing["beta"] = false

	// The overview answers the broker's snapshots under their own keys
	// (the page works out depth, sources and alarm state: app.js).
	var ov struct {
		AlarmsOn bool                   `json:"alarmsOn"`
		Queues   []tidemq.QueueSnapshot `json:"queues"`
		Alarms   []struct {
			Queue, State string
		} `json:"alarms"`
	}
	f.get("/console/api/overview", http.StatusOK, &ov)
	var doc json.RawMessage
	f.get("/console/api/overview", http.StatusOK, &doc)
	raw := string(doc)
	if !ov.AlarmsOn || len(ov.Queues) != 3 {
		t.Fatalf("overview: %+v", ov)
	}
	for _, key := range []string{`"Visible":`, `"InFlight":`, `"Delayed":`, `"DeadLetterTarget":`, `"IsDeadLetterQueue":`, `"Stats":{"Sent":`} {
		if !strings.Contains(raw, key) {
			t.Errorf("overview %s: no %s (QueueSnapshot's keys)", raw, key)
		}
	}
	if q := ov.Queues[0]; q.Name != "zz-dlq" || !q.IsDeadLetterQueue {
		t.Errorf("first queue %+v, want the DLQ zz-dlq", q)
	}
	if ov.Queues[1].Name != "alpha" || ov.Queues[2].Name != "beta" {
		t.Errorf("order %s, %s after the DLQ, want alpha, beta", ov.Queues[1].Name, ov.Queues[2].Name)
	}
	b := ov.Queues[2]
	if b.Visible != 1 || b.InFlight != 3 || b.Delayed != 1 || b.Depth() != 5 {
		t.Errorf("beta: visible %d, in flight %d, delayed %d; want 1, 3, 1", b.Visible, b.InFlight, b.Delayed)
	}
	if b.OldestAgeSeconds < 10 || b.DeadLetterTarget != dlq.ARN || b.MaxReceiveCount != 4 || b.Stats.Sent != 5 {
		t.Errorf("beta: %+v", b)
	}
	states := map[string]string{}
	for _, a := range ov.Alarms {
		states[a.Queue] = a.State
	}
	if len(ov.Alarms) != 2 || states["zz-dlq"] != "FIRING" || states["beta"] != "OK" {
		t.Errorf("alarms %+v, want zz-dlq firing and beta quiet, none for alpha", ov.Alarms)
	}
}

func TestMessagesPeekShowsTheStoryAndChangesNothing(t *testing.T) {
	f := newFixture(t)
	inner := `{"orderId":"o-1","total":12.5}`
	envelope, _ := json.Marshal(map[string]string{"Type": "Notification", "MessageId": "n-1", "TopicArn": "arn:aws:sns:us-east-1:000000000000:orders",
		"Subject": "new order", "Message": inner, "Timestamp": "2026-12-03T08:00:00.000Z"})
	f.deadLetterSetup(string(envelope))

	type msg struct {
		Body, Pretty, SourceQueue, Explain string
		ReceiveCount                       int
		Envelope                           *struct{ Kind, TopicArn, Subject, Message string }
		History                            []struct {
			Kind, Queue string
			Client      *tidemq.ClientInfo
		}
	}
	var out struct{ Messages []msg }
	for range 2 { // the second look sees what the first left
		f.get("/console/api/messages?queue=orders-dlq", http.StatusOK, &out)
	}
	if len(out.Messages) != 1 {
		t.Fatalf("%d messages, want 1", len(out.Messages))
	}
	m := out.Messages[0]
	if m.ReceiveCount != 1 {
		t.Errorf("receive count %d after two peeks, want 1 (the one receive in orders)", m.ReceiveCount)
	}
	if m.Body != string(envelope) || !strings.Contains(m.Pretty, "\n  \"Message\"") {
		t.Errorf("body %q, pretty %q", m.Body, m.Pretty)
	}
	if m.Envelope == nil || m.Envelope.Kind != "sns" || m.Envelope.Subject != "new order" || m.Envelope.Message != "{\n  \"orderId\": \"o-1\",\n  \"total\": 12.5\n}" {
		t.Errorf("envelope %+v, want the SNS notification unwrapped and indented", m.Envelope)
	}
	if m.SourceQueue != "orders" {
		t.Errorf("source queue %q", m.SourceQueue)
	}
	if !strings.Contains(m.Explain, "dead-lettered from orders") || !strings.Contains(m.Explain, "after 1 receive(s) by AKIDWORKER (billing-worker)") {
		t.Errorf("explain %q", m.Explain)
	}
	kinds := []string{}
	for _, ev := range m.History {
		kinds = append(kinds, ev.Kind)
	}
	if strings.Join(kinds, ",") != "sent,received,visibility-expired,dead-lettered" {
		t.Errorf("history %v", kinds)
	}
	if len(m.History) > 1 && (m.History[1].Client == nil || m.History[1].Client.Addr != "10.0.0.7:5000") {
		t.Errorf("the receive's client: %+v", m.History[1].Client)
	}
	// Still there to receive: nothing was taken.
	if got := f.receive("orders-dlq", 30); len(got) != 1 || got[0].ApproximateReceiveCount != 2 {
		t.Errorf("after peeking, a receive got %d messages", len(got))
	}
}

func TestMessagesErrors(t *testing.T) {
	f := newFixture(t)
	var e apiError
	f.get("/console/api/messages", http.StatusBadRequest, &e)
	if e.Code != "MissingParameter" {
		t.Errorf("no queue: %+v", e)
	}
	f.get("/console/api/messages?queue=nope", http.StatusBadRequest, &e)
	if e.Code != "AWS.SimpleQueueService.NonExistentQueue" {
		t.Errorf("unknown queue: %+v", e)
	}
	f.createQueue("q", nil)
	f.get("/console/api/messages?queue=q&max=abc", http.StatusBadRequest, &e)
	f.get("/console/api/messages?queue=q&max=100000", http.StatusBadRequest, &e)
	f.get("/console/api/nothing", http.StatusNotFound, &e)
	if e.Code != "NotFound" {
		t.Errorf("unknown path: %+v", e)
	}
}

func TestRedriveStartsAMoveTaskBackToTheSource(t *testing.T) {
	f := newFixture(t)
	f.deadLetterSetup(`{"n":1}`)
	var e apiError
	f.post("/console/api/redrive", `{"queue":"orders"}`, http.StatusBadRequest, &e) // not a DLQ
	f.post("/console/api/redrive", `{"queue":"orders-dlq","extra":1}`, http.StatusBadRequest, &e)
	if e.Code != "MalformedInput" {
		t.Errorf("unknown field: %+v", e)
	}
	var started struct{ TaskHandle string }
	f.post("/console/api/redrive", `{"queue":"orders-dlq"}`, http.StatusOK, &started)
	if started.TaskHandle == "" {
		t.Fatal("no task handle")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var tasks struct {
			Tasks []struct{ Status, Destination string }
		}
		f.get("/console/api/movetasks?queue=orders-dlq", http.StatusOK, &tasks)
		if len(tasks.Tasks) != 1 || tasks.Tasks[0].Destination != "" {
			t.Fatalf("tasks %+v, want the one task, back to the sources", tasks)
		}
		if tasks.Tasks[0].Status == tidemq.MoveTaskCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the move task is %s", tasks.Tasks[0].Status)
		}
		f.clock.Advance(time.Second)
		time.Sleep(10 * time.Millisecond) // the task runs on its own goroutine
	}
	if got := f.receive("orders", 30); len(got) != 1 || got[0].Body != `{"n":1}` {
		t.Errorf("the source queue gave %d messages after the redrive", len(got))
	}
}

func TestPurge(t *testing.T) {
	f := newFixture(t)
	f.createQueue("q", nil)
	f.send("q", "a", nil)
	f.send("q", "b", nil)
	var out struct{ Purged string }
	f.post("/console/api/purge", `{"queue":"q"}`, http.StatusOK, &out)
	if out.Purged != "q" {
		t.Errorf("purge answered %+v", out)
	}
	if got := f.receive("q", 30); len(got) != 0 {
		t.Errorf("%d messages left after the purge", len(got))
	}
	var e apiError
	f.post("/console/api/purge", `{"queue":"q"}`, http.StatusForbidden, &e) // AWS's 60-second cooldown, with AWS's status
	if e.Code != "AWS.SimpleQueueService.PurgeQueueInProgress" {
		t.Errorf("second purge: %+v", e)
	}
	f.post("/console/api/purge", `{}`, http.StatusBadRequest, &e)
	f.post("/console/api/purge", `{"queue":"q"} {"queue":"q"}`, http.StatusBadRequest, &e)
	f.get("/console/api/purge?queue=q", http.StatusNotFound, &e)
}

type fakeTopics struct{}

func (fakeTopics) ListTopics(context.Context) []*sns.Topic {
	return []*sns.Topic{{Name: "t", ARN: "arn:aws:sns:us-east-1:000000000000:t"}}
}

func (fakeTopics) ListSubscriptions(context.Context, sns.ListSubscriptionsParams) ([]*sns.Subscription, error) {
	return []*sns.Subscription{
		{ARN: "arn:sub:1", Protocol: "https", Endpoint: "https://hook:hunter2@example.com/x", Pending: true, Token: "SECRET-TOKEN"},
		{ARN: "arn:sub:2", Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:q",
			Attributes: map[string]string{"RawMessageDelivery": "true", "FilterPolicy": `{"a":["b"]}`}},
	}, nil
}

func TestTopicsWithoutSecrets(t *testing.T) {
	f := newFixture(t)
	resp, err := http.Get(f.srv.URL + "/console/api/topics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, secret := range []string{"SECRET-TOKEN", "hunter2"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the topics answer shows %s: %s", secret, b)
		}
	}
	var out struct {
		Topics []struct {
			Name          string
			Subscriptions []struct {
				Endpoint           string
				Pending            bool
				RawMessageDelivery bool
				FilterPolicy       string
			}
		}
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Topics) != 1 || len(out.Topics[0].Subscriptions) != 2 {
		t.Fatalf("topics %s (%v)", b, err)
	}
	s := out.Topics[0].Subscriptions
	if s[0].Endpoint != "https://hook:xxxxx@example.com/x" || !s[0].Pending {
		t.Errorf("https subscription %+v", s[0])
	}
	if !s[1].RawMessageDelivery || s[1].FilterPolicy != `{"a":["b"]}` {
		t.Errorf("sqs subscription %+v", s[1])
	}
}

func TestAssetsHeadersAndNoInlineScript(t *testing.T) {
	f := newFixture(t)
	for path, ctype := range map[string]string{"/console/": "text/html", "/console/app.js": "text/javascript", "/console/style.css": "text/css"} {
		resp, err := http.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), ctype) {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, h.Get("Content-Type"))
		}
		if h.Get("Content-Security-Policy") != ContentSecurityPolicy || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cross-Origin-Resource-Policy") != "same-origin" {
			t.Errorf("GET %s: headers %v", path, h)
		}
	}
	for _, path := range []string{"/console/nope.js", "/console/../go.mod", "/console/static/app.js", "/console/x/"} {
		resp, err := http.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMovedPermanently {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, want) || strings.Contains(ContentSecurityPolicy, "unsafe") {
			t.Errorf("the policy lacks %s or allows something unsafe: %s", want, ContentSecurityPolicy)
		}
	}
	// Every file the page and its modules name is embedded, and no
	// script, style or handler is inline.
	sub, _ := fs.Sub(static, "static")
	page, _ := fs.ReadFile(sub, "index.html")
	if regexp.MustCompile(`<script(\s[^>]*)?>[^<]`).Match(page) || regexp.MustCompile(`\s(on\w+|style)=`).Match(page) {
		t.Error("index.html has an inline script, handler or style")
	}
	refs := regexp.MustCompile(`(?:src|href)="([\w.-]+\.(?:js|css))"|from '\./([\w.-]+\.js)'`)
	names, _ := fs.Glob(sub, "*")
	for _, name := range names {
		b, _ := fs.ReadFile(sub, name)
		for _, m := range refs.FindAllStringSubmatch(string(b), -1) {
			ref := m[1] + m[2]
			if _, err := fs.Stat(sub, ref); err != nil {
				t.Errorf("%s names %s, which is not embedded", name, ref)
			}
		}
		if strings.HasSuffix(name, ".js") && regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function`).Match(b) {
			t.Errorf("%s builds HTML or code from strings", name)
		}
	}
}

// A queue of another region than the server's is named "<region>/<name>"
// everywhere in the console, so that its links and actions reach it.
func TestQueuesOfAnotherRegion(t *testing.T) {
	f := newFixture(t)
	dlq := f.createQueue("eu-west-1/jobs-dlq", nil)
	f.createQueue("eu-west-1/jobs", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlq.ARN + `","maxReceiveCount":"1"}`})
	f.createQueue("jobs", nil) // the same name at home is another queue
	f.send("eu-west-1/jobs", "x", nil)
	f.receive("eu-west-1/jobs", 5)
	f.clock.Advance(6 * time.Second)
	f.receive("eu-west-1/jobs", 5)

	var ov struct {
		Queues []tidemq.QueueSnapshot
	}
	f.get("/console/api/overview", http.StatusOK, &ov)
	names := map[string]string{}
	for _, q := range ov.Queues {
		names[q.Name] = q.DeadLetterTarget
	}
	if target, ok := names["eu-west-1/jobs"]; !ok || target != dlq.ARN {
		t.Errorf("overview %+v: want eu-west-1/jobs redriving to eu-west-1/jobs-dlq", ov.Queues)
	}
	var out struct {
		Messages []struct{ SourceQueue string }
	}
	f.get("/console/api/messages?queue=eu-west-1%2Fjobs-dlq", http.StatusOK, &out)
	if len(out.Messages) != 1 || out.Messages[0].SourceQueue != "eu-west-1/jobs" {
		t.Errorf("messages %+v, want one from eu-west-1/jobs", out.Messages)
	}
	var started struct{ TaskHandle string }
	f.post("/console/api/redrive", `{"queue":"eu-west-1/jobs-dlq"}`, http.StatusOK, &started)
	var tasks struct {
		Tasks []struct{ Source string }
	}
	f.get("/console/api/movetasks?queue=eu-west-1%2Fjobs-dlq", http.StatusOK, &tasks)
	if len(tasks.Tasks) != 1 || tasks.Tasks[0].Source != "eu-west-1/jobs-dlq" {
		t.Errorf("move tasks %+v", tasks.Tasks)
	}
}

// Past OverviewLimit queues, the overview lists the first (DLQs
// first), says how many there are, and includes the queue a page asks for.
func TestOverviewTruncated(t *testing.T) {
	f := newFixture(t)
	f.createQueue("zz-dlq", nil)
	for i := 0; i < OverviewLimit+5; i++ {
		f.createQueue(fmt.Sprintf("q%05d", i), nil)
	}
	type ov struct {
		Total     int  `json:"total"`
		Truncated bool `json:"truncated"`
		Queues    []struct{ Name, ARN string }
	}
	var got ov
	f.get("/console/api/overview", http.StatusOK, &got)
	if got.Total != OverviewLimit+6 || !got.Truncated || len(got.Queues) != OverviewLimit || got.Queues[0].Name != "zz-dlq" {
		t.Fatalf("overview: total %d, truncated %v, %d queues, first %+v", got.Total, got.Truncated, len(got.Queues), got.Queues[0])
	}
	last := fmt.Sprintf("q%05d", OverviewLimit+4)
	f.get("/console/api/overview?queue="+last, http.StatusOK, &got)
	if n := len(got.Queues); n != OverviewLimit+1 || got.Queues[n-1].Name != last {
		t.Errorf("overview?queue=%s: %d queues, last %+v", last, n, got.Queues[n-1])
	}
	// A dead-letter queue asked for comes with its sources, so that the
	// page can offer a redrive back to them.
	lastARN := got.Queues[len(got.Queues)-1].ARN
	f.createQueue("zzz-src", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + lastARN + `","maxReceiveCount":"1"}`})
	f.get("/console/api/overview?queue="+last, http.StatusOK, &got)
	var names []string
	for _, q := range got.Queues {
		names = append(names, q.Name)
	}
	if n := len(names); n != OverviewLimit+1 || names[0] != last || names[n-1] != "zzz-src" {
		t.Errorf("overview?queue=%s with a source: %d queues, first %s, last %s; want %s first, %s last", last, n, names[0], names[n-1], last, "zzz-src")
	}
}

type twoTopics struct{ fakeTopics }

func (twoTopics) ListTopics(context.Context) []*sns.Topic {
	return []*sns.Topic{{Name: "a-t", ARN: "arn:aws:sns:us-east-1:000000000000:a-t"}, {Name: "b-t", ARN: "arn:aws:sns:us-east-1:000000000000:b-t"}}
}

// Under permissions the topics page lists only the topics VisibleTopic
// lets the signed-in caller see.
func TestTopicsVisibleOnly(t *testing.T) {
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	c := New(Options{Broker: eng, Region: "us-east-1", AccountID: "000000000000", Topics: twoTopics{},
		VisibleTopic: func(r *http.Request, arn string) bool {
			return strings.HasSuffix(arn, ":"+r.Header.Get("X-Team")+"-t")
		}})
	t.Cleanup(c.Wait)
	for team, want := range map[string]string{"a": "a-t", "b": "b-t", "c": ""} {
		r := httptest.NewRequest("GET", APIPath+"/topics", nil)
		r.Header.Set("X-Team", team)
		w := httptest.NewRecorder()
		c.API().ServeHTTP(w, r)
		var out struct{ Topics []struct{ Name string } }
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tp := range out.Topics {
			got = append(got, tp.Name)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("team %s sees %v, want %q", team, got, want)
		}
	}
}

// The overview counts every queue in its totals, not only those it lists:
// past OverviewLimit dead-letter queues, the page still says how many
// there are and how many queues fire.
func TestOverviewTotalsCountEveryQueue(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < OverviewLimit+5; i++ {
		f.createQueue(fmt.Sprintf("dlq-%05d", i), nil)
	}
	f.createQueue("plain", nil)
	f.firing["plain"] = true
	f.firing["dlq-00001"] = false
	var ov struct {
		Total            int  `json:"total"`
		Truncated        bool `json:"truncated"`
		DeadLetterQueues int  `json:"deadLetterQueues"`
		Firing           int  `json:"firing"`
		Queues           []struct{ Name, ARN string }
	}
	f.get("/console/api/overview", http.StatusOK, &ov)
	if ov.Total != OverviewLimit+6 || !ov.Truncated || len(ov.Queues) != OverviewLimit {
		t.Fatalf("overview: total %d, truncated %v, %d queues", ov.Total, ov.Truncated, len(ov.Queues))
	}
	if ov.DeadLetterQueues != OverviewLimit+5 || ov.Firing != 1 {
		t.Errorf("overview: %d dead-letter queues, %d firing; want %d and 1 (plain, not listed)", ov.DeadLetterQueues, ov.Firing, OverviewLimit+5)
	}
	if q := ov.Queues[0]; q.Name != "dlq-00000" || q.ARN != "arn:aws:sqs:us-east-1:000000000000:dlq-00000" {
		t.Errorf("first queue %+v, want dlq-00000 with its ARN", q)
	}
}

// An overview over many queues keeps copies of the queues it lists only:
// at 20,000 queues (1,000 listed) it allocates far less than one object
// per queue (the whole Snapshot, sorted and filtered, made an ARN and a
// snapshot for each: 32 MB at 100,000 queues for every poll).
func TestOverviewCostsItsQueues(t *testing.T) {
	f := newFixture(t)
	const n = 20 * OverviewLimit
	for i := range n {
		f.createQueue(fmt.Sprintf("q%05d", i), nil)
	}
	r := httptest.NewRequest("GET", APIPath+"/overview", nil)
	h := f.con.API()
	allocs := testing.AllocsPerRun(3, func() {
		h.ServeHTTP(httptest.NewRecorder(), r)
	})
	if allocs > n/2 {
		t.Errorf("an overview of %d queues: %.0f allocations, want under %d", n, allocs, n/2)
	}
	t.Logf("an overview of %d queues: %.0f allocations", n, allocs)
}

// snapshotOnly hides the engine's Visit: the overview reads Snapshot, as
// over PostgreSQL.
type snapshotOnly struct{ tidemq.Broker }

// Under permissions the overview lists and counts only the queues Visible
// lets the caller see, the same whether it visits the queues (the engine)
// or reads their Snapshot (PostgreSQL).
func TestOverviewVisibleOnly(t *testing.T) {
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	for _, n := range []string{"a-1", "a-2-dlq", "b-1", "b-dlq"} {
		if _, err := eng.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	visible := func(r *http.Request, arn string) bool {
		return strings.HasPrefix(arn, "arn:aws:sqs:us-east-1:000000000000:"+r.Header.Get("X-Team")+"-")
	}
	for _, b := range []tidemq.Broker{eng, snapshotOnly{eng}} {
		c := New(Options{Broker: b, Region: "us-east-1", AccountID: "000000000000", Visible: visible})
		t.Cleanup(c.Wait)
		r := httptest.NewRequest("GET", APIPath+"/overview", nil)
		r.Header.Set("X-Team", "a")
		w := httptest.NewRecorder()
		c.API().ServeHTTP(w, r)
		var out struct {
			Total, DeadLetterQueues int
			Queues                  []struct{ Name, ARN string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, q := range out.Queues {
			got = append(got, q.Name+" "+q.ARN)
		}
		want := "a-2-dlq arn:aws:sqs:us-east-1:000000000000:a-2-dlq,a-1 arn:aws:sqs:us-east-1:000000000000:a-1"
		if strings.Join(got, ",") != want || out.Total != 2 || out.DeadLetterQueues != 1 {
			t.Errorf("%T: team a sees %v (total %d, %d DLQs), want %q, 2, 1", b, got, out.Total, out.DeadLetterQueues, want)
		}
	}
}
