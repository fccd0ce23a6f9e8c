package trigger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/internal/testlog"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// adminEnv is a manager that keeps its triggers in a store, logs into a
// buffer, and serves the admin API.
type adminEnv struct {
	t    *testing.T
	e    *engine.Engine
	m    *trigger.Manager
	st   *mem.Store
	logs *testlog.Buffer
	url  string
}

func newAdminEnv(t *testing.T) *adminEnv {
	t.Helper()
	e, err := engine.Open(engine.Options{Store: mem.New(), Clock: clocktest.New(time.Unix(1_700_000_000, 0)), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"q", "q2"} {
		if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: q, Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
			t.Fatal(err)
		}
	}
	v := &adminEnv{t: t, e: e, st: mem.New(), logs: &testlog.Buffer{}}
	log := slog.New(slog.NewTextHandler(v.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	v.m, err = trigger.NewManager(trigger.Options{Broker: e, Store: v.st, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	v.m.Start()
	srv := httptest.NewServer(v.m.Handler())
	v.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := v.m.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		e.Close()
	})
	return v
}

// call makes an admin API request and returns the raw body.
func (v *adminEnv) call(method, path, body string, want int) []byte {
	v.t.Helper()
	req, _ := http.NewRequest(method, v.url+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		v.t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	return b
}

func (v *adminEnv) send(body string) { v.sendTo("q", body) }

func (v *adminEnv) sendTo(queue, body string) {
	v.t.Helper()
	res, err := v.e.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue, Entries: []tidemq.SendEntry{{Body: body}}})
	if err != nil || res[0].Err != nil {
		v.t.Fatal(err, res)
	}
}

// noSecret fails when b holds any of the secrets.
func noSecret(t *testing.T, what string, b []byte, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("%s shows the secret %q:\n%s", what, s, b)
		}
	}
}

// TestAdminAPINeverShowsSecrets: no response of the admin API (created,
// listed, read, updated, enabled, disabled, refused), no LastError and no
// log line holds a header value or the userinfo of a target URL; the store
// the server keeps them in (the data directory) holds them.
func TestAdminAPINeverShowsSecrets(t *testing.T) {
	v := newAdminEnv(t)
	secrets := []string{"tok-auth-1", "tok-custom-2", "tok-pass-3", "tok-user-4", "tok-asuser-5", "tok-refused-6"}
	// Both targets refuse connections, so that their errors (which quote
	// the URL) reach LastError and the log.
	var bodies [][]byte
	keep := func(b []byte) []byte { bodies = append(bodies, b); return b }
	keep(v.call("POST", "/tidemq/triggers", `{"Name":"t","Queue":"q","Timeout":1,"Target":{"URL":"http://tok-user-4:tok-pass-3@127.0.0.1:1/fn",
		"Headers":{"Authorization":"Bearer tok-auth-1","X-Api-Key":"tok-custom-2"}}}`, 201))
	keep(v.call("POST", "/tidemq/triggers", `{"Name":"u","Queue":"q2","Timeout":1,"Target":{"URL":"http://tok-asuser-5@127.0.0.1:1/"}}`, 201))
	keep(v.call("POST", "/tidemq/triggers", `{"Name":"x","Queue":"q","Target":{"URL":"ftp://a:tok-refused-6@h/"}}`, 400))
	keep(v.call("POST", "/tidemq/triggers", `{"Name":"x","Queue":"q","Target":{"URL":"http://a:tok-refused-6@h:port/"}}`, 400))
	keep(v.call("POST", "/tidemq/triggers", `{"Name":"x","Queue":"q","Target":{"URL":"a:tok-refused-6@h/"}}`, 400))
	v.send("m")
	v.sendTo("q2", "m")
	eventually(t, "both triggers' errors", func() bool {
		a, _ := v.m.Get("t")
		b, _ := v.m.Get("u")
		return a.LastError != "" && b.LastError != ""
	})
	failed := keep(v.call("GET", "/tidemq/triggers/t", ``, 200))
	keep(v.call("GET", "/tidemq/triggers/u", ``, 200))
	keep(v.call("PATCH", "/tidemq/triggers/t", `{"BatchSize":3}`, 200))
	keep(v.call("POST", "/tidemq/triggers/t/disable", ``, 200))
	keep(v.call("POST", "/tidemq/triggers/t/enable", ``, 200))
	keep(v.call("GET", "/tidemq/triggers", ``, 200))
	one := keep(v.call("GET", "/tidemq/triggers/t", ``, 200))
	for i, b := range bodies {
		noSecret(t, "response "+string(rune('a'+i)), b, secrets...)
	}
	noSecret(t, "the log", []byte(v.logs.String()), secrets...)

	// The names show, with the placeholder; the digest stands for the values.
	var st trigger.Status
	if err := json.Unmarshal(one, &st); err != nil {
		t.Fatal(err)
	}
	if st.Target.URL != "http://********@127.0.0.1:1/fn" || len(st.Target.Headers) != 2 ||
		st.Target.Headers["Authorization"] != trigger.Redacted || st.Target.Headers["X-Api-Key"] != trigger.Redacted {
		t.Errorf("target shown as %+v", st.Target)
	}
	if !strings.HasPrefix(st.SecretsDigest, "pbkdf2-sha256:") {
		t.Errorf("digest %q", st.SecretsDigest)
	}
	if !bytes.Contains(failed, []byte(`"LastError": "Post \"http://********@127.0.0.1:1/fn\": dial tcp`)) {
		t.Errorf("LastError:\n%s", failed)
	}

	// The server keeps the real values, in its store.
	b := v.stored()
	for _, s := range secrets[:5] {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("the store lacks %q", s)
		}
	}
}

// stored returns every value the manager keeps in its store, one a line.
func (v *adminEnv) stored() []byte {
	v.t.Helper()
	var b []byte
	err := v.st.Scan([]byte(trigger.Namespace), func(k, val []byte) error {
		b = append(append(b, val...), '\n')
		return nil
	})
	if err != nil {
		v.t.Fatal(err)
	}
	return b
}

// seen are the credentials an invocation brought.
type seen struct {
	auth, key, other string
	user, pass       string
}

// secretTarget is an HTTP target that reports what each invocation brought.
func secretTarget(t *testing.T) (chan seen, string) {
	ch := make(chan seen, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{auth: r.Header.Get("Authorization"), key: r.Header.Get("X-Api-Key"), other: r.Header.Get("X-Other")}
		s.user, s.pass, _ = r.BasicAuth()
		ch <- s
	}))
	t.Cleanup(srv.Close)
	return ch, srv.URL
}

func next(t *testing.T, ch chan seen) seen {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(15 * time.Second):
		t.Fatal("the target was not invoked")
		return seen{}
	}
}

// configOf keeps, of a Status as the API returns it, what an update takes.
func configOf(t *testing.T, status []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(status, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"State", "QueueArn", "LastError", "LastErrorTime", "Warnings", "SecretsDigest", "Stats"} {
		delete(m, k)
	}
	return m
}

func marshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGetModifyPutKeepsSecrets: a client that reads a trigger, changes a
// setting and writes it all back keeps the secrets it was shown as
// placeholders (the target still gets them); a new value replaces one, a
// header left out is removed, and a placeholder with nothing stored behind
// it is refused.
func TestGetModifyPutKeepsSecrets(t *testing.T) {
	v := newAdminEnv(t)
	ch, fn := secretTarget(t)
	withUser := strings.Replace(fn, "http://", "http://bob:pw-1@", 1)
	v.call("POST", "/tidemq/triggers", marshal(t, map[string]any{"Name": "t", "Queue": "q",
		"Target": map[string]any{"URL": withUser, "Headers": map[string]string{"X-Api-Key": "key-1", "X-Other": "other-1"}}}), 201)
	v.send("1")
	if s := next(t, ch); s.key != "key-1" || s.other != "other-1" || s.user != "bob" || s.pass != "pw-1" {
		t.Fatalf("first invocation: %+v", s)
	}

	// GET, modify, PUT.
	c := configOf(t, v.call("GET", "/tidemq/triggers/t", "", 200))
	c["BatchSize"] = 3
	v.call("PUT", "/tidemq/triggers/t", marshal(t, c), 200)
	v.send("2")
	if s := next(t, ch); s.key != "key-1" || s.other != "other-1" || s.user != "bob" || s.pass != "pw-1" {
		t.Fatalf("after GET-modify-PUT: %+v", s)
	}
	if st, _ := v.m.Get("t"); st.BatchSize != 3 {
		t.Fatalf("the PUT was not applied: %+v", st)
	}

	// A new value replaces one; a header left out is removed.
	c = configOf(t, v.call("GET", "/tidemq/triggers/t", "", 200))
	c["Target"].(map[string]any)["Headers"] = map[string]string{"X-Api-Key": "key-2"}
	v.call("PUT", "/tidemq/triggers/t", marshal(t, c), 200)
	v.send("3")
	if s := next(t, ch); s.key != "key-2" || s.other != "" || s.user != "bob" || s.pass != "pw-1" {
		t.Fatalf("after replacing a header and removing another: %+v", s)
	}

	// A placeholder stands for a stored value, or for nothing.
	v.call("PATCH", "/tidemq/triggers/t", `{"Target":{"Headers":{"X-Api-Key":"********","X-New":"********"}}}`, 400)
	v.call("POST", "/tidemq/triggers", `{"Name":"copy","Queue":"q","Target":{"URL":"http://h/","Headers":{"X-Api-Key":"********"}}}`, 400)
	v.call("POST", "/tidemq/triggers", `{"Name":"copy","Queue":"q","Target":{"URL":"http://********@h/"}}`, 400)

	// What the server keeps, restarted, is what the target got.
	if b := v.stored(); !bytes.Contains(b, []byte(`"X-Api-Key":"key-2"`)) || bytes.Contains(b, []byte("X-Other")) || !bytes.Contains(b, []byte("bob:pw-1@")) {
		t.Errorf("stored:\n%s", b)
	}
}

// TestSecretsStayWithTheirOrigin: an update that moves a target to another
// origin must give its secrets again, or whoever may update a trigger could
// have the server send them to their own host.
func TestSecretsStayWithTheirOrigin(t *testing.T) {
	v := newAdminEnv(t)
	ch, fn := secretTarget(t)
	_, other := secretTarget(t)
	v.call("POST", "/tidemq/triggers", marshal(t, map[string]any{"Name": "t", "Queue": "q",
		"Target": map[string]any{"URL": fn + "/a", "Headers": map[string]string{"X-Api-Key": "key-1"}}}), 201)
	for _, patch := range []string{
		marshal(t, map[string]any{"Target": map[string]any{"URL": other}}),
		marshal(t, map[string]any{"Target": map[string]any{"URL": other, "Headers": map[string]string{"X-Api-Key": trigger.Redacted}}}),
	} {
		if b := v.call("PATCH", "/tidemq/triggers/t", patch, 400); !strings.Contains(string(b), "give the values of header X-Api-Key again") {
			t.Errorf("PATCH %s: %s", patch, b)
		}
	}
	// The same origin keeps them; another one takes them given again.
	v.call("PATCH", "/tidemq/triggers/t", marshal(t, map[string]any{"Target": map[string]any{"URL": fn + "/b"}}), 200)
	v.send("1")
	if s := next(t, ch); s.key != "key-1" {
		t.Fatalf("after a move on the same origin: %+v", s)
	}
	v.call("PATCH", "/tidemq/triggers/t", marshal(t, map[string]any{"Target": map[string]any{"URL": other, "Headers": map[string]string{"X-Api-Key": "key-other"}}}), 200)
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h/p":                  "http://h/p",
		"https://u:p@h:8/p?q=1#f":     "https://********@h:8/p?q=1#f",
		"https://tok@h/":              "https://********@h/",
		"https://a@b:p@h/":            "https://********@h/", // the last '@' ends the userinfo, as net/url reads it
		"http://h/p?email=a@b":        "http://h/p?email=a@b",
		"http://h#a@b":                "http://h#a@b",
		"http://@h/":                  "http://@h/",
		"http://u:p@h:port-not-a-url": "http://********@h:port-not-a-url",
		"":                            "",
	} {
		if got := trigger.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretsDigest(t *testing.T) {
	c := func(name, url string, h map[string]string) *trigger.Config {
		return &trigger.Config{Name: name, Target: trigger.Target{URL: url, Headers: h}}
	}
	a := trigger.SecretsDigest(c("t", "http://u:p@h/", map[string]string{"A": "1", "B": "2"}))
	if a == "" || a != trigger.SecretsDigest(c("t", "http://u:p@h/other", map[string]string{"B": "2", "A": "1"})) {
		t.Errorf("equal secrets, different digests")
	}
	for i, other := range []*trigger.Config{
		c("t", "http://u:q@h/", map[string]string{"A": "1", "B": "2"}),
		c("t", "http://u:p@h/", map[string]string{"A": "1", "B": "3"}),
		c("t", "http://u:p@h/", map[string]string{"A": "1"}),
		c("t2", "http://u:p@h/", map[string]string{"A": "1", "B": "2"}), // salted with the name
	} {
		if trigger.SecretsDigest(other) == a {
			t.Errorf("%d: different secrets, same digest", i)
		}
	}
	if d := trigger.SecretsDigest(c("t", "http://h/", nil)); d != "" {
		t.Errorf("no secrets, digest %q", d)
	}
}
