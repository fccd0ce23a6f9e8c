package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// localInvocations reads a trigger's invocations counter in s's /metrics:
// what s itself ran.
func (s *server) localInvocations(t *testing.T, name string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^tidemq_trigger_invocations_total\{[^}]*trigger="` + regexp.QuoteMeta(name) + `"[^}]*\} (\d+)`).FindStringSubmatch(s.metrics(t))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// triggerInvocations reads a trigger's Invocations counter on s, in its
// Status: every node's, shared.
func (s *server) triggerInvocations(t *testing.T, name string) int {
	t.Helper()
	var st struct{ Stats struct{ Invocations int } }
	if err := json.Unmarshal([]byte(s.adminJSON(t, http.MethodGet, "/tidemq/triggers/"+name, "", http.StatusOK)), &st); err != nil {
		t.Fatal(err)
	}
	return st.Stats.Invocations
}

// snsStatus posts an SNS request and returns its status only.
func (s *server) snsStatus(action string, params ...string) int {
	form := url.Values{"Action": {action}, "Version": {"2010-03-31"}}
	for i := 0; i+1 < len(params); i += 2 {
		form.Set(params[i], params[i+1])
	}
	resp, err := httpClient.PostForm(s.url+"/", form)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// Two `tidemq serve --store postgres://` processes share topics and
// triggers: a topic created on A is used on B within --cluster-reload, a
// trigger created on A runs on one node only, an alarm is notified once,
// not once per node, and when the node running the trigger is
// killed (kill -9: no release) the other takes over once the lease
// expired (--lease-ttl 3s: within 4 s), without running a message twice.
func TestServePostgresClusterSharesTopicsAndRunsTriggersOnce(t *testing.T) {
	t.Parallel()
	dsn, _ := pgtest.Isolated(t)
	dir := t.TempDir()
	var hookMu sync.Mutex
	var dlqAlerts []string // status of each TidemqDeadLetterQueueNotEmpty alert received
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Alerts []struct {
				Status string
				Labels map[string]string
			}
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		hookMu.Lock()
		defer hookMu.Unlock()
		for _, a := range p.Alerts {
			if a.Labels["alertname"] == "TidemqDeadLetterQueueNotEmpty" && a.Labels["queue"] == "orders-dlq" {
				dlqAlerts = append(dlqAlerts, a.Status)
			}
		}
	}))
	t.Cleanup(hook.Close)
	alerts := func() []string {
		hookMu.Lock()
		defer hookMu.Unlock()
		return append([]string(nil), dlqAlerts...)
	}
	flags := func(name string) []string {
		return []string{"--store", dsn, "--data-dir", filepath.Join(dir, name), "--alarm-interval", "100ms", "--alarm-webhook", hook.URL,
			"--lease-ttl", "3s", "--cluster-reload", "300ms"}
	}
	nodes := []*server{startServer(t, flags("a")...), startServer(t, flags("b")...)}
	a, b := nodes[0], nodes[1]

	// A topic created on A, subscribed and published to on B.
	q := a.createQueue(t, "news-q", nil)
	qARN := a.queueAttrs(t, q, "QueueArn")["QueueArn"]
	topic := xmlValues(a.snsCall(t, "CreateTopic", "Name", "news"), "TopicArn")[0]
	eventuallyE2E(t, "B sees the topic created on A", func() bool {
		return b.snsStatus("GetTopicAttributes", "TopicArn", topic) == http.StatusOK
	})
	b.snsCall(t, "Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", qARN)
	b.snsCall(t, "Publish", "TopicArn", topic, "Message", "hello from B")
	if ms := a.receive(t, q, map[string]any{"WaitTimeSeconds": 5}); len(ms) != 1 || !strings.Contains(str(ms[0]["Body"]), "hello from B") {
		t.Fatalf("A's queue got %v, want the publish made on B", ms)
	}

	// Both nodes evaluate the alarms; only the leader notifies: once.
	dlq := a.createQueue(t, "orders-dlq", nil)
	a.send(t, dlq, "dead")
	eventuallyE2E(t, "the dlq_not_empty webhook", func() bool { return len(alerts()) > 0 })
	time.Sleep(time.Second) // ten more evaluations on each node
	if got := alerts(); len(got) != 1 || got[0] != "firing" {
		t.Fatalf("dlq_not_empty notifications: %v, want one firing", got)
	}

	// A trigger created on A runs on one node.
	fn, calls := fnTarget(t)
	jobs := a.createQueue(t, "jobs", map[string]string{"VisibilityTimeout": "30"})
	a.adminJSON(t, http.MethodPost, "/tidemq/triggers", `{"Name":"jobs-fn","Queue":"jobs","Timeout":2,"BatchSize":1,
		"Target":{"URL":"`+fn.URL+`/jobs"}}`, http.StatusCreated)
	eventuallyE2E(t, "B sees the trigger created on A", func() bool {
		status, _ := rawRequest(t, http.MethodGet, b.url+"/tidemq/triggers/jobs-fn", "application/json", "")
		return status == http.StatusOK
	})
	for _, body := range []string{"one", "two", "three"} {
		a.send(t, jobs, body)
		nextInvocation(t, calls, body)
	}
	var ia, ib int
	eventuallyE2E(t, "the invocations counted", func() bool { // counted once the answer is handled
		ia, ib = a.localInvocations(t, "jobs-fn"), b.localInvocations(t, "jobs-fn")
		return ia+ib >= 3
	})
	if ia+ib != 3 || (ia != 0 && ib != 0) {
		t.Fatalf("invocations in /metrics: A %d, B %d; want 3 on one node", ia, ib)
	}
	eventuallyE2E(t, "both nodes show the cluster's counters", func() bool {
		return a.triggerInvocations(t, "jobs-fn") == 3 && b.triggerInvocations(t, "jobs-fn") == 3
	})
	leader, survivor := a, b
	if ib > 0 {
		leader, survivor = b, a
	}
	leader.kill()
	killed := time.Now()
	survivor.send(t, jobs, "after failover")
	nextInvocation(t, calls, "after failover")
	t.Logf("the survivor ran the trigger %v after the leader was killed", time.Since(killed).Round(time.Millisecond))
	select {
	case in := <-calls:
		t.Errorf("an extra invocation: %+v", in)
	case <-time.After(500 * time.Millisecond):
	}
	if n := survivor.localInvocations(t, "jobs-fn"); n != 1 {
		t.Errorf("the survivor ran %d invocations, want 1", n)
	}
	eventuallyE2E(t, "the survivor shows every node's invocations", func() bool { return survivor.triggerInvocations(t, "jobs-fn") == 4 })
}

// kill ends s with SIGKILL, as a crash: no lease is released.
func (s *server) kill() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
}

// A publish whose HTTP delivery is still failing when its node is killed
// (kill -9) is delivered by the other node, once: not while the publishing
// node lives (its retry is its own), and as soon as that node's lease has
// expired. Both nodes sign with the one key kept in PostgreSQL.
func TestServePostgresClusterRedeliversADeadNodesOutbox(t *testing.T) {
	t.Parallel()
	dsn, _ := pgtest.Isolated(t)
	dir := t.TempDir()
	flags := func(name string) []string {
		return []string{"--store", dsn, "--data-dir", filepath.Join(dir, name), "--no-alarms", "--lease-ttl", "3s", "--cluster-reload", "300ms"}
	}
	a, b := startServer(t, flags("a")...), startServer(t, flags("b")...)
	if ca, cb := a.signingCert(t), b.signingCert(t); ca != cb {
		t.Fatal("the nodes sign with different keys")
	}
	h := newHook(t)
	topic := xmlValues(a.snsCall(t, "CreateTopic", "Name", "orders"), "TopicArn")[0]
	a.snsCall(t, "Subscribe", "TopicArn", topic, "Protocol", "http", "Endpoint", h.srv.URL+"/hook")
	confirmation := h.next(t, "SubscriptionConfirmation")
	a.snsCall(t, "ConfirmSubscription", "TopicArn", topic, "Token", confirmation["Token"])

	h.status.Store(http.StatusInternalServerError)
	messageID := xmlValues(a.snsCall(t, "Publish", "TopicArn", topic, "Message", "pending"), "MessageId")[0]
	attempts := 0
	deadline := time.After(3 * time.Second) // A retries 20 s later (AWS's default HTTP policy)
	for done := false; !done; {
		select {
		case m := <-h.got:
			if m["Type"] == "Notification" && m["MessageId"] == messageID {
				attempts++
			}
		case <-deadline:
			done = true
		}
	}
	if attempts != 1 {
		t.Fatalf("%d attempts while A lives, want A's one", attempts)
	}
	h.status.Store(http.StatusOK)
	a.kill()
	killed := time.Now()
	n := h.next(t, "Notification")
	if n["MessageId"] != messageID {
		t.Fatalf("the endpoint got %v, want message %s", n, messageID)
	}
	t.Logf("delivered by B %v after A was killed", time.Since(killed).Round(time.Millisecond))
	select {
	case m := <-h.got:
		t.Errorf("delivered again: %v", m)
	case <-time.After(2 * time.Second):
	}
	if m := b.metrics(t); !strings.Contains(m, "tidemq_sns_deliveries_recovered_total 1\n") {
		t.Errorf("B's /metrics does not count one recovered delivery")
	}
}
