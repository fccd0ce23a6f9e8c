package e2e

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/pebble"
)

// SNS state in `tidemq serve`'s one store: what survives a restart, and
// the upgrade of a data directory that an older release left.

// snsCall posts one unsigned SNS Query request and returns the XML answer,
// failing the test unless the status is 200. params are name, value pairs.
func (s *server) snsCall(t *testing.T, action string, params ...string) string {
	t.Helper()
	form := url.Values{"Action": {action}, "Version": {"2010-03-31"}}
	for i := 0; i+1 < len(params); i += 2 {
		form.Set(params[i], params[i+1])
	}
	resp, err := httpClient.PostForm(s.url+"/", form)
	if err != nil {
		t.Fatalf("%s: %v", action, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %s\n%s", action, resp.Status, body)
	}
	return string(body)
}

// xmlValues returns the text of every <name> element of an answer.
func xmlValues(body, name string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<`+name+`>([^<]*)</`+name+`>`).FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// signingCert fetches the certificate notifications are signed with.
func (s *server) signingCert(t *testing.T) string {
	t.Helper()
	resp, err := httpClient.Get(s.url + "/SimpleNotificationService-tidemq.pem")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "CERTIFICATE") {
		t.Fatalf("GET the signing certificate: %s\n%s", resp.Status, b)
	}
	return string(b)
}

// metrics returns GET /metrics.
func (s *server) metrics(t *testing.T) string {
	t.Helper()
	resp, err := httpClient.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// verifyNotification checks a notification's signature (SignatureVersion
// 1: SHA1withRSA) with a PEM certificate, as SNS subscribers do.
func verifyNotification(t *testing.T, n map[string]string, certPEM string) {
	t.Helper()
	blk, _ := pem.Decode([]byte(certPEM))
	if blk == nil {
		t.Fatal("no certificate")
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	var sts strings.Builder
	for _, k := range []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"} {
		if v, ok := n[k]; ok {
			sts.WriteString(k + "\n" + v + "\n")
		}
	}
	sig, err := base64.StdEncoding.DecodeString(n["Signature"])
	if err != nil {
		t.Fatal(err)
	}
	h := sha1.Sum([]byte(sts.String()))
	if err := rsa.VerifyPKCS1v15(cert.PublicKey.(*rsa.PublicKey), crypto.SHA1, h[:], sig); err != nil {
		t.Fatalf("the notification does not verify with the certificate: %v", err)
	}
}

// hook is an HTTP subscription endpoint that answers notifications with
// status (confirmations always with 200) and hands over what it receives.
type hook struct {
	srv    *httptest.Server
	status atomic.Int32
	got    chan map[string]string
}

func newHook(t *testing.T) *hook {
	h := &hook{got: make(chan map[string]string, 100)}
	h.status.Store(http.StatusOK)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]string
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		status := http.StatusOK
		if m["Type"] == "Notification" {
			status = int(h.status.Load())
		}
		m["answered"] = http.StatusText(status)
		h.got <- m
		w.WriteHeader(status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// next returns the next request of type typ that was answered 200.
func (h *hook) next(t *testing.T, typ string) map[string]string {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m := <-h.got:
			if m["Type"] == typ && m["answered"] == "OK" {
				return m
			}
		case <-deadline:
			t.Fatalf("the endpoint received no %s", typ)
		}
	}
}

// Topics, subscriptions (a confirmed HTTP one too), the signing key and a
// publish still waiting for its HTTP endpoint all survive a restart of
// `tidemq serve`: they are in the one store, beside the queues.
func TestServeKeepsSNSStateAcrossRestart(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	h := newHook(t)

	s := startServer(t, "--data-dir", dataDir)
	topic := xmlValues(s.snsCall(t, "CreateTopic", "Name", "orders", "Attributes.entry.1.key", "DisplayName",
		"Attributes.entry.1.value", "Orders"), "TopicArn")[0]
	q := s.createQueue(t, "fanout", nil)
	sqsSub := xmlValues(s.snsCall(t, "Subscribe", "TopicArn", topic, "Protocol", "sqs",
		"Endpoint", "arn:aws:sqs:us-east-1:"+account+":fanout", "Attributes.entry.1.key", "RawMessageDelivery",
		"Attributes.entry.1.value", "true"), "SubscriptionArn")[0]
	s.snsCall(t, "Subscribe", "TopicArn", topic, "Protocol", "http", "Endpoint", h.srv.URL+"/hook")
	confirmation := h.next(t, "SubscriptionConfirmation")
	httpSub := xmlValues(s.snsCall(t, "ConfirmSubscription", "TopicArn", topic, "Token", confirmation["Token"]), "SubscriptionArn")[0]
	cert := s.signingCert(t)

	h.status.Store(http.StatusInternalServerError) // the HTTP delivery waits in the outbox
	messageID := xmlValues(s.snsCall(t, "Publish", "TopicArn", topic, "Message", "pending"), "MessageId")[0]
	if ms := s.receive(t, q, map[string]any{"WaitTimeSeconds": 2}); len(ms) != 1 || str(ms[0], "Body") != "pending" {
		t.Fatalf("the queue got %v", ms)
	}
	s.stop()

	h.status.Store(http.StatusOK)
	s = startServer(t, "--data-dir", dataDir)
	n := h.next(t, "Notification")
	if n["MessageId"] != messageID || n["Message"] != "pending" {
		t.Errorf("after the restart the endpoint got %v, want message %s", n, messageID)
	}
	if got := s.signingCert(t); got != cert {
		t.Errorf("the signing certificate changed across the restart:\n%s\nwas\n%s", got, cert)
	}
	verifyNotification(t, n, cert)
	if m := s.metrics(t); !strings.Contains(m, "tidemq_sns_deliveries_recovered_total 1\n") {
		t.Errorf("/metrics does not count one recovered delivery:\n%s", m)
	}
	if got := xmlValues(s.snsCall(t, "ListTopics"), "TopicArn"); !slices.Equal(got, []string{topic}) {
		t.Errorf("topics after the restart: %v", got)
	}
	if got := xmlValues(s.snsCall(t, "GetTopicAttributes", "TopicArn", topic), "value"); !slices.Contains(got, "Orders") {
		t.Errorf("topic attributes after the restart: %v", got)
	}
	subs := xmlValues(s.snsCall(t, "ListSubscriptionsByTopic", "TopicArn", topic), "SubscriptionArn")
	slices.Sort(subs)
	want := []string{sqsSub, httpSub}
	slices.Sort(want)
	if !slices.Equal(subs, want) {
		t.Errorf("subscriptions after the restart: %v, want %v (confirmed)", subs, want)
	}
	// The SQS delivery was done before the restart and is not repeated.
	if ms := s.receive(t, q, map[string]any{"WaitTimeSeconds": 1, "VisibilityTimeout": 0}); len(ms) != 0 {
		t.Errorf("the queue got %v again", ms)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "sns")); !os.IsNotExist(err) {
		t.Errorf("DATA_DIR/sns: %v, want none: everything is in the one store", err)
	}
}

// A data directory left by the release before the one store (its queues
// in the store, the SNS state in DATA_DIR/sns: sns/testdata/legacy) is
// upgraded at the first start: the topics and the signing certificate are
// served, the publish left in the old outbox reaches its queues, and
// DATA_DIR/sns is moved aside.
func TestServeImportsAnOlderDataDir(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	fixture := filepath.Join("..", "sns", "testdata", "legacy")
	old := filepath.Join(dataDir, "sns")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sns-topics.json", "sns-signing.pem"} {
		b, err := os.ReadFile(filepath.Join(fixture, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outbox, err := pebble.Open(filepath.Join(old, "outbox"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dump, err := os.ReadFile(filepath.Join(fixture, "outbox.kv"))
	if err != nil {
		t.Fatal(err)
	}
	b := outbox.NewBatch()
	for _, line := range strings.Split(strings.TrimSpace(string(dump)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		kb, _ := hex.DecodeString(k)
		vb, _ := hex.DecodeString(v)
		b.Set(kb, vb)
	}
	if d, err := b.Commit(); err != nil || d.Wait() != nil {
		t.Fatalf("write the old outbox: %v", err)
	}
	if err := outbox.Close(); err != nil {
		t.Fatal(err)
	}
	store, err := pebble.Open(dataDir, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(engine.Options{Store: store, SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"orders-q", "audit"} {
		if _, err := eng.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: q}); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	s := startServer(t, "--data-dir", dataDir)
	if !strings.Contains(s.logs.String(), "imported the SNS state of an older release") {
		t.Errorf("the import is not logged:\n%s", s.logs)
	}
	topics := xmlValues(s.snsCall(t, "ListTopics"), "TopicArn")
	if !slices.Equal(topics, []string{"arn:aws:sns:us-east-1:" + account + ":events.fifo", "arn:aws:sns:us-east-1:" + account + ":orders"}) {
		t.Errorf("topics after the upgrade: %v", topics)
	}
	pemFile, _ := os.ReadFile(filepath.Join(fixture, "sns-signing.pem"))
	if cert := s.signingCert(t); !strings.HasSuffix(string(pemFile), cert) {
		t.Errorf("the signing certificate is not the old one:\n%s", cert)
	}
	for q, want := range map[string]string{"orders-q": "order 1", "audit": `"Message" : "order 1"`} {
		url := str(s.mustCall(t, "GetQueueUrl", map[string]any{"QueueName": q}), "QueueUrl")
		if ms := s.receive(t, url, map[string]any{"WaitTimeSeconds": 2}); len(ms) != 1 || !strings.Contains(str(ms[0], "Body"), want) {
			t.Errorf("queue %s got %v", q, ms)
		}
	}
	if _, err := os.Stat(filepath.Join(dataDir, "sns.imported", "sns-topics.json")); err != nil {
		t.Errorf("DATA_DIR/sns was not moved aside: %v", err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("DATA_DIR/sns is still there: %v", err)
	}
}
