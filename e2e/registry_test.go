package e2e

import (
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// snsTry posts an SNS request and returns its status and body, for calls
// that may fail and for goroutines (it never fails the test).
func (s *server) snsTry(action string, params ...string) (int, string) {
	form := url.Values{"Action": {action}, "Version": {"2010-03-31"}}
	for i := 0; i+1 < len(params); i += 2 {
		form.Set(params[i], params[i+1])
	}
	resp, err := httpClient.PostForm(s.url+"/", form)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// drain receives every message of a queue (leaving them invisible) and
// returns their bodies.
func (s *server) drain(t *testing.T, q string) []string {
	t.Helper()
	var out []string
	for {
		ms := s.receive(t, q, map[string]any{"MaxNumberOfMessages": 10, "WaitTimeSeconds": 1})
		if len(ms) == 0 {
			return out
		}
		for _, m := range ms {
			out = append(out, str(m["Body"]))
		}
	}
}

// registryNodes starts node A on a fresh database, lets setup create what
// both nodes must know on A, then starts node B, which loads it at start.
// The nodes reload only every minute: what B learns of A's later changes,
// it learns from their announcement, and a change B makes from a stale
// copy is not hidden by a reload.
func registryNodes(t *testing.T, setup func(a *server)) (a, b *server) {
	dsn, _ := pgtest.Isolated(t)
	dir := t.TempDir()
	flags := func(name string) []string {
		return []string{"--store", dsn, "--data-dir", filepath.Join(dir, name), "--lease-ttl", "3s", "--cluster-reload", "60s"}
	}
	a = startServer(t, flags("a")...)
	setup(a)
	b = startServer(t, flags("b")...)
	return a, b
}

// topicSub creates a topic and a queue on a, subscribes the queue with raw
// delivery, and returns the topic ARN, the queue URL and the subscription
// ARN.
func topicSub(t *testing.T, a *server, name string) (topic, q, sub string) {
	t.Helper()
	topic = xmlValues(a.snsCall(t, "CreateTopic", "Name", name), "TopicArn")[0]
	q = a.createQueue(t, name+"-q", nil)
	qARN := a.queueAttrs(t, q, "QueueArn")["QueueArn"]
	sub = xmlValues(a.snsCall(t, "Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", qARN,
		"Attributes.entry.1.key", "RawMessageDelivery", "Attributes.entry.1.value", "true"), "SubscriptionArn")[0]
	return topic, q, sub
}

// The six lost updates of issue 26, with two nodes on one PostgreSQL, each
// made on B right after A's change was acknowledged (B's copy of the
// registry is then stale): none comes back, none is lost, nothing is
// doubled.
func TestServePostgresClusterRegistryHasNoLostUpdates(t *testing.T) {
	t.Parallel()
	type fixture struct{ topic, q, sub string }
	fx := map[string]fixture{}
	a, b := registryNodes(t, func(a *server) {
		for _, name := range []string{"unsub", "deltopic", "delsub", "twice", "attrs"} {
			topic, q, sub := topicSub(t, a, name)
			fx[name] = fixture{topic, q, sub}
		}
	})
	gone := func(s *server, action string, params ...string) bool {
		status, _ := s.snsTry(action, params...)
		return status == http.StatusNotFound
	}

	// 1. Unsubscribe on A, then SetSubscriptionAttributes on B: NotFound,
	// and the subscription stays deleted on every node.
	f := fx["unsub"]
	a.snsCall(t, "Unsubscribe", "SubscriptionArn", f.sub)
	if status, body := b.snsTry("SetSubscriptionAttributes", "SubscriptionArn", f.sub, "AttributeName", "RawMessageDelivery", "AttributeValue", "false"); status != http.StatusNotFound {
		t.Errorf("1. SetSubscriptionAttributes on B after Unsubscribe on A: %d %s, want 404 NotFound", status, body)
	}
	time.Sleep(300 * time.Millisecond) // any announcement is heard
	for _, n := range []*server{a, b} {
		if !gone(n, "GetSubscriptionAttributes", "SubscriptionArn", f.sub) {
			t.Errorf("1. the unsubscribed subscription is back on %s", n.url)
		}
		n.snsCall(t, "Publish", "TopicArn", f.topic, "Message", "after unsubscribe")
	}
	if got := a.drain(t, f.q); len(got) != 0 {
		t.Errorf("1. the unsubscribed queue got %q", got)
	}

	// 2. DeleteTopic on A, then SetTopicAttributes on B: NotFound, and
	// the topic stays deleted.
	f = fx["deltopic"]
	a.snsCall(t, "DeleteTopic", "TopicArn", f.topic)
	if status, body := b.snsTry("SetTopicAttributes", "TopicArn", f.topic, "AttributeName", "DisplayName", "AttributeValue", "back"); status != http.StatusNotFound {
		t.Errorf("2. SetTopicAttributes on B after DeleteTopic on A: %d %s, want 404 NotFound", status, body)
	}
	time.Sleep(300 * time.Millisecond)
	for _, n := range []*server{a, b} {
		if !gone(n, "GetTopicAttributes", "TopicArn", f.topic) {
			t.Errorf("2. the deleted topic is back on %s", n.url)
		}
	}

	// 3. DeleteTopic on A, then Subscribe on B: NotFound, no subscription.
	f = fx["delsub"]
	a.snsCall(t, "DeleteTopic", "TopicArn", f.topic)
	q3 := a.createQueue(t, "delsub-2", nil)
	q3ARN := a.queueAttrs(t, q3, "QueueArn")["QueueArn"]
	if status, body := b.snsTry("Subscribe", "TopicArn", f.topic, "Protocol", "sqs", "Endpoint", q3ARN); status != http.StatusNotFound {
		t.Errorf("3. Subscribe on B after DeleteTopic on A: %d %s, want 404 NotFound", status, body)
	}
	time.Sleep(300 * time.Millisecond)
	for _, n := range []*server{a, b} {
		if subs := xmlValues(n.snsCall(t, "ListSubscriptions"), "TopicArn"); strings.Contains(strings.Join(subs, " "), f.topic) {
			t.Errorf("3. %s lists a subscription of the deleted topic: %v", n.url, subs)
		}
	}

	// 4. The same Subscribe on A and on B: one subscription, the same ARN,
	// one delivery per publish.
	f = fx["twice"]
	q4 := a.createQueue(t, "twice-2", nil)
	q4ARN := a.queueAttrs(t, q4, "QueueArn")["QueueArn"]
	arnA := xmlValues(a.snsCall(t, "Subscribe", "TopicArn", f.topic, "Protocol", "sqs", "Endpoint", q4ARN), "SubscriptionArn")[0]
	arnB := xmlValues(b.snsCall(t, "Subscribe", "TopicArn", f.topic, "Protocol", "sqs", "Endpoint", q4ARN), "SubscriptionArn")[0]
	if arnA != arnB {
		t.Errorf("4. Subscribe on A gave %s, the same Subscribe on B %s: want one subscription", arnA, arnB)
	}
	time.Sleep(300 * time.Millisecond)
	b.snsCall(t, "Publish", "TopicArn", f.topic, "Message", "once")
	a.snsCall(t, "Publish", "TopicArn", f.topic, "Message", "once")
	if got := a.drain(t, q4); len(got) != 2 {
		t.Errorf("4. two publishes delivered %d messages to the queue subscribed twice, want 2", len(got))
	}

	// 5. FilterPolicy set on A, RawMessageDelivery on B: both kept.
	f = fx["attrs"]
	a.snsCall(t, "SetSubscriptionAttributes", "SubscriptionArn", f.sub, "AttributeName", "FilterPolicy", "AttributeValue", `{"k":["yes"]}`)
	b.snsCall(t, "SetSubscriptionAttributes", "SubscriptionArn", f.sub, "AttributeName", "RawMessageDelivery", "AttributeValue", "false")
	time.Sleep(300 * time.Millisecond)
	for _, n := range []*server{a, b} {
		body := n.snsCall(t, "GetSubscriptionAttributes", "SubscriptionArn", f.sub)
		attrs := map[string]string{}
		keys, vals := xmlValues(body, "key"), xmlValues(body, "value")
		for i := range keys {
			attrs[keys[i]] = vals[i]
		}
		if attrs["FilterPolicy"] != `{"k":["yes"]}` || attrs["RawMessageDelivery"] != "false" {
			t.Errorf("5. %s: FilterPolicy %q, RawMessageDelivery %q; want both changes kept", n.url, attrs["FilterPolicy"], attrs["RawMessageDelivery"])
		}
	}

	// 6. CreateTopic of one name with different attributes on A and B:
	// B is refused as AWS refuses it, and A's attributes stay.
	t6 := xmlValues(a.snsCall(t, "CreateTopic", "Name", "created-twice", "Attributes.entry.1.key", "DisplayName", "Attributes.entry.1.value", "from A"), "TopicArn")[0]
	status, body := b.snsTry("CreateTopic", "Name", "created-twice", "Attributes.entry.1.key", "DisplayName", "Attributes.entry.1.value", "from B")
	if status != http.StatusBadRequest || !strings.Contains(body, "<Code>InvalidParameter</Code>") ||
		!strings.Contains(body, "Invalid parameter: Attributes Reason: Topic already exists with different attributes") {
		t.Errorf("6. CreateTopic on B with other attributes: %d %s, want 400 InvalidParameter", status, body)
	}
	if got := xmlValues(b.snsCall(t, "CreateTopic", "Name", "created-twice", "Attributes.entry.1.key", "DisplayName", "Attributes.entry.1.value", "from A"), "TopicArn"); len(got) != 1 || got[0] != t6 {
		t.Errorf("6. CreateTopic on B with A's attributes: %v, want %s", got, t6)
	}
	for _, n := range []*server{a, b} {
		if !strings.Contains(n.snsCall(t, "GetTopicAttributes", "TopicArn", t6), "from A") {
			t.Errorf("6. %s lost A's DisplayName", n.url)
		}
	}
}

// publishTimes publishes to topic on s, one at a time, until stop is
// closed, and returns when each publish began and what it answered.
type publishRun struct {
	start  []time.Time
	status []int
}

func publishUntil(s *server, topic string, attrs []string, stop <-chan struct{}, done chan<- publishRun) {
	var r publishRun
	for i := 0; ; i++ {
		select {
		case <-stop:
			done <- r
			return
		default:
		}
		params := append([]string{"TopicArn", topic, "Message", strconv.Itoa(i)}, attrs...)
		r.start = append(r.start, time.Now())
		status, _ := s.snsTry("Publish", params...)
		r.status = append(r.status, status)
	}
}

// window runs publishes on b while act runs on a, and for 2 s after act
// was acknowledged; changed tells whether publish i shows act's effect.
// It fails the test if a publish that began later than bound after the
// acknowledgement does not, and returns the window: how long after the
// acknowledgement the last publish that did not began.
func window(t *testing.T, what string, b *server, topic string, attrs []string, act func(), changed func(run publishRun, i int) bool) time.Duration {
	t.Helper()
	const bound = time.Second
	stop, done := make(chan struct{}), make(chan publishRun, 1)
	go publishUntil(b, topic, attrs, stop, done)
	time.Sleep(200 * time.Millisecond)
	act()
	acked := time.Now()
	time.Sleep(2 * time.Second)
	close(stop)
	run := <-done
	var win time.Duration
	late, lateChanged := 0, 0
	for i, st := range run.start {
		if !st.After(acked) {
			continue
		}
		ok := changed(run, i)
		if !ok && st.Sub(acked) > win {
			win = st.Sub(acked)
		}
		if st.Sub(acked) > bound {
			late++
			if ok {
				lateChanged++
			}
		}
	}
	if late == 0 {
		t.Fatalf("%s: no publish began more than %v after the acknowledgement", what, bound)
	}
	if lateChanged != late {
		t.Errorf("%s: %d of the %d publishes made on B more than %v after A's acknowledgement did not see the change", what, late-lateChanged, late, bound)
	}
	t.Logf("%s: B saw A's change %v after it was acknowledged (the last publish that did not see it began then)", what, win.Round(time.Millisecond))
	return win
}

// Reproduction 7 of issue 26: a change acknowledged on A is seen by B's
// publishes within milliseconds (its announcement), not at B's next
// reload (a minute here): a deleted subscription gets nothing, a new one
// gets everything, a new filter policy filters, a deleted topic refuses
// publishes. The windows are logged: the README quotes them.
func TestServePostgresClusterChangesSeenAtOnce(t *testing.T) {
	t.Parallel()
	type fixture struct{ topic, q, sub string }
	fx := map[string]fixture{}
	a, b := registryNodes(t, func(a *server) {
		for _, name := range []string{"w-unsub", "w-sub", "w-filter", "w-del"} {
			topic, q, sub := topicSub(t, a, name)
			fx[name] = fixture{topic, q, sub}
		}
	})
	delivered := func(q string) map[string]bool {
		got := map[string]bool{}
		for _, body := range a.drain(t, q) {
			got[body] = true
		}
		return got
	}
	// deliveredTo tells whether publish i reached q (read once, after the
	// publishes).
	deliveredTo := func(q string) func(publishRun, int) bool {
		var seen map[string]bool
		return func(_ publishRun, i int) bool {
			if seen == nil {
				seen = delivered(q)
			}
			return seen[strconv.Itoa(i)]
		}
	}

	f := fx["w-unsub"]
	got := deliveredTo(f.q)
	window(t, "Unsubscribe on A", b, f.topic, nil,
		func() { a.snsCall(t, "Unsubscribe", "SubscriptionArn", f.sub) },
		func(r publishRun, i int) bool { return !got(r, i) })

	f = fx["w-sub"]
	q2 := a.createQueue(t, "w-sub-2", nil)
	q2ARN := a.queueAttrs(t, q2, "QueueArn")["QueueArn"]
	window(t, "Subscribe on A", b, f.topic, nil,
		func() {
			a.snsCall(t, "Subscribe", "TopicArn", f.topic, "Protocol", "sqs", "Endpoint", q2ARN,
				"Attributes.entry.1.key", "RawMessageDelivery", "Attributes.entry.1.value", "true")
		}, deliveredTo(q2))

	f = fx["w-filter"]
	got = deliveredTo(f.q)
	window(t, "FilterPolicy set on A", b, f.topic,
		[]string{"MessageAttributes.entry.1.Name", "k", "MessageAttributes.entry.1.Value.DataType", "String", "MessageAttributes.entry.1.Value.StringValue", "no"},
		func() {
			a.snsCall(t, "SetSubscriptionAttributes", "SubscriptionArn", f.sub, "AttributeName", "FilterPolicy", "AttributeValue", `{"k":["yes"]}`)
		},
		func(r publishRun, i int) bool { return !got(r, i) })

	f = fx["w-del"]
	window(t, "DeleteTopic on A", b, f.topic, nil,
		func() { a.snsCall(t, "DeleteTopic", "TopicArn", f.topic) },
		func(r publishRun, i int) bool { return r.status[i] == http.StatusNotFound })
}

// A topic created on A is usable on B at once: Subscribe, GetTopicAttributes
// and Publish on B right after A acknowledged CreateTopic find it (B reads
// the database when its copy lacks a topic), where they answered NotFound
// until B's copy caught up.
func TestServePostgresClusterTopicUsableAtOnceOnAnotherNode(t *testing.T) {
	t.Parallel()
	var q, qARN string
	a, b := registryNodes(t, func(a *server) {
		q = a.createQueue(t, "at-once-q", nil)
		qARN = a.queueAttrs(t, q, "QueueArn")["QueueArn"]
	})
	const rounds = 20
	for i := 0; i < rounds; i++ {
		topic := xmlValues(a.snsCall(t, "CreateTopic", "Name", "at-once-"+strconv.Itoa(i)), "TopicArn")[0]
		if status, body := b.snsTry("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", qARN,
			"Attributes.entry.1.key", "RawMessageDelivery", "Attributes.entry.1.value", "true"); status != http.StatusOK {
			t.Fatalf("round %d: Subscribe on B right after CreateTopic on A: %d %s", i, status, body)
		}
		if status, body := b.snsTry("GetTopicAttributes", "TopicArn", topic); status != http.StatusOK {
			t.Fatalf("round %d: GetTopicAttributes on B: %d %s", i, status, body)
		}
		if status, body := b.snsTry("Publish", "TopicArn", topic, "Message", "m"+strconv.Itoa(i)); status != http.StatusOK {
			t.Fatalf("round %d: Publish on B: %d %s", i, status, body)
		}
	}
	if got := b.drain(t, q); len(got) != rounds {
		t.Fatalf("the queue got %d of B's %d publishes: %v", len(got), rounds, got)
	}
	if status, _ := b.snsTry("Subscribe", "TopicArn", "arn:aws:sns:us-east-1:000000000000:never-made", "Protocol", "sqs", "Endpoint", qARN); status != http.StatusNotFound {
		t.Fatalf("Subscribe to a topic that exists nowhere: %d, want 404", status)
	}
}
