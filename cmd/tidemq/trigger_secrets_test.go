package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// runTrigger runs 'tidemq trigger ARGS --endpoint URL'.
func runTrigger(endpoint string, args ...string) (string, error) {
	cmd := newTriggerCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{args[0], "--endpoint", endpoint}, args[1:]...))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// TestTriggerCommandsShowNoSecret: what 'tidemq trigger' prints holds no
// header value and no URL userinfo, whatever the command; an update that
// leaves --header out keeps the headers, one that gives --header replaces
// them, and NAME=******** keeps a stored value.
func TestTriggerCommandsShowNoSecret(t *testing.T) {
	e, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
		t.Fatal(err)
	}
	m, err := trigger.NewManager(trigger.Options{Broker: e})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	secrets := []string{"tok-cli-1", "tok-cli-2", "tok-cli-3"}
	const url = "http://u:tok-cli-3@127.0.0.1:1/"
	var outs []string
	for _, args := range [][]string{
		{"create", "t", "--queue", "q", "--url", url, "--header", "Authorization=Bearer tok-cli-1", "--header", "X-Key=tok-cli-2", "--enabled=false"},
		{"list"},
		{"list", "--json"},
		{"update", "t", "--batch-size", "3"},
		{"enable", "t"},
		{"disable", "t"},
	} {
		out, err := runTrigger(srv.URL, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		outs = append(outs, out)
	}
	for i, out := range outs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("output %d shows %q:\n%s", i, s, out)
			}
		}
	}
	if !strings.Contains(outs[1], "http://********@127.0.0.1:1/") || !strings.Contains(outs[2], `"Authorization": "********"`) {
		t.Errorf("list:\n%s\n%s", outs[1], outs[2])
	}
	digest := func(h map[string]string) string {
		return trigger.SecretsDigest(&trigger.Config{Name: "t", Target: trigger.Target{URL: url, Headers: h}})
	}
	if st, _ := m.Get("t"); st.SecretsDigest != digest(map[string]string{"Authorization": "Bearer tok-cli-1", "X-Key": "tok-cli-2"}) || st.BatchSize != 3 {
		t.Fatalf("an update without --header lost the secrets: %+v", st)
	}
	if out, err := runTrigger(srv.URL, "update", "t", "--header", "Authorization="+trigger.Redacted); err != nil {
		t.Fatalf("update --header: %v\n%s", err, out)
	}
	if st, _ := m.Get("t"); st.SecretsDigest != digest(map[string]string{"Authorization": "Bearer tok-cli-1"}) {
		t.Fatalf("update --header Authorization=%s: %+v", trigger.Redacted, st)
	}
}

// TestTriggerListRedactsAnOldServer: 'tidemq trigger list' hides the
// secrets of a server that still shows them (one from before they were
// redacted).
func TestTriggerListRedactsAnOldServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"Triggers":[{"Name":"t","Queue":"q","State":"Enabled","Target":{"URL":"http://u:tok-old-1@h/","Headers":{"X-Key":"tok-old-2"}}}]}`))
	}))
	defer srv.Close()
	for _, args := range [][]string{{"list"}, {"list", "--json"}} {
		out, err := runTrigger(srv.URL, args...)
		if err != nil || strings.Contains(out, "tok-old") || !strings.Contains(out, "http://********@h/") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}
