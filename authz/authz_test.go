package authz

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sigv4"
	"github.com/tidemq/tidemq/audit"
)

const account = "000000000000"

const principalsFile = `# two teams
principals:
  - name: team-a
    keys: ["AKIDA:secret-a", "AKIDA2:secret-a2"]
    policy:
      Version: "2012-10-17"
      Statement:
        - Effect: Allow
          Action: ["sqs:*", "tidemq:Redrive"]
          Resource: "arn:aws:sqs:*:000000000000:a-*"
  - name: team-b
    account: "222222222222"
    keys: ["AKIDB:secret-b"]
    policy: {"Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}]}
  - name: ops
    root: true
    keys: ["AKIDOPS:secret-ops"]
`

func writeFile(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "credentials")
	if err := os.WriteFile(path+".tmp", []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadPrincipals(t *testing.T) {
	d, err := LoadFile(writeFile(t, t.TempDir(), principalsFile), account)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := d.Principal("AKIDA2")
	if !ok || a.ARN() != "arn:aws:iam::000000000000:user/team-a" || a.Policy == nil || d.Credentials["AKIDA2"] != "secret-a2" {
		t.Fatalf("team-a: %+v", a)
	}
	if b, _ := d.Principal("AKIDB"); b.Account != "222222222222" {
		t.Fatalf("team-b's account: %+v", b)
	}
	if ops, _ := d.Principal("AKIDOPS"); !ops.Root || ops.ARN() != "arn:aws:iam::000000000000:root" {
		t.Fatalf("ops: %+v", ops)
	}
	// The original forms: every key a root user of the server's account.
	d, err = LoadFile(writeFile(t, t.TempDir(), "K1:s1\n# c\nK2:s2\n"), account)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := d.Principal("K2"); !ok || !p.Root || p.Account != account {
		t.Fatalf("AKID:SECRET lines: %+v", p)
	}
	d, err = LoadFile(writeFile(t, t.TempDir(), "[default]\naws_access_key_id = K3\naws_secret_access_key = s3\n"), account)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := d.Principal("K3"); !ok || !p.Root {
		t.Fatalf("INI: %+v", p)
	}
}

func TestLoadRefuses(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"principals: []\n", "no principals"},
		{"principals:\n  - name: x\n    keys: []\n", "no keys"},
		{"principals:\n  - name: 'a b'\n    keys: [K:s]\n", "name must be"},
		{"principals:\n  - name: x\n    account: 12\n    keys: [K:s]\n", "12 digits"},
		{"principals:\n  - name: x\n    keys: [K]\n", "not AKID:SECRET"},
		{"principals:\n  - name: x\n    keys: [K:s]\n  - name: y\n    keys: [K:t]\n", "belongs to another principal"},
		{"principals:\n  - name: x\n    keys: [K:s]\n  - name: x\n    keys: [L:t]\n", "given twice"},
		{"principals:\n  - name: x\n    keys: [K:s]\n    extra: 1\n", "not a principals file"},
		{"principals:\n  - name: x\n    keys: [K:s]\n    policy: {Statement: [{Effect: Allow, Action: 'sqs:*'}]}\n", "needs Resource"},
		{"principals:\n  - name: x\n    keys: [K:s]\n    policy: {Statement: [{Effect: Allow, Principal: '*', Action: 'sqs:*', Resource: '*'}]}\n", "has no Principal"},
		{"principals:\n  - name: x\n    keys: [K:s]\n    policy: {Statement: [{Effect: Allow, Action: 'sqs:*', Resource: '*', Condition: {DateLessThan: {'aws:CurrentTime': '2030'}}}]}\n", "DateLessThan is not supported"},
	} {
		_, err := LoadFile(writeFile(t, t.TempDir(), c.file), account)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.file, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error shows a secret: %v", err)
		}
	}
}

func TestStoreReloadKeepsTheLastGoodFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "K1:s1\n")
	s, err := NewStore(path, account, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := s.Reload(); changed || err != nil {
		t.Fatalf("an unchanged file: %v %v", changed, err)
	}
	writeFile(t, dir, principalsFile)
	if changed, err := s.Reload(); !changed || err != nil {
		t.Fatalf("a changed file: %v %v", changed, err)
	}
	if _, ok := s.Directory().Principal("K1"); ok {
		t.Fatal("a removed key still works")
	}
	writeFile(t, dir, "principals: [broken\n")
	if _, err := s.Reload(); err == nil {
		t.Fatal("a broken file was accepted")
	}
	if _, ok := s.Directory().Principal("AKIDA"); !ok {
		t.Fatal("a broken file dropped the previous credentials")
	}
}

func newAuthorizer(t *testing.T, policies map[string]string) (*Authorizer, string) {
	t.Helper()
	s, err := NewStore(writeFile(t, t.TempDir(), principalsFile), account, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.Open(logPath, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &Authorizer{Store: s, Account: account, Region: "us-east-1", Audit: l,
		QueuePolicy: func(_ context.Context, q string) (string, error) { return policies[q], nil }}, logPath
}

func TestAuthorizer(t *testing.T) {
	policies := map[string]string{
		"a-in": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"222222222222"},"Action":"sqs:SendMessage"},` +
			`{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage","Condition":{"ArnEquals":{"aws:SourceArn":"arn:aws:sns:us-east-1:000000000000:t"}}}]}`,
		"a-broken": `{"Statement":`,
	}
	a, logPath := newAuthorizer(t, policies)
	r := httptest.NewRequest("POST", "/", nil)
	q := func(name string) string { return tidemq.QueueARN("us-east-1", account, name) }
	for _, c := range []struct {
		key, action, resource string
		ok                    bool
	}{
		{"AKIDA", "sqs:ReceiveMessage", q("a-in"), true},
		{"AKIDA", "sqs:ReceiveMessage", q("b-in"), false},
		{"AKIDA", "tidemq:Redrive", q("a-dlq"), true},
		{"AKIDA", "sqs:ReceiveMessage", q("a-broken"), false}, // a policy that does not parse denies
		{"AKIDB", "sqs:SendMessage", q("a-in"), true},         // cross-account: both allow
		{"AKIDB", "sqs:SendMessage", q("a-other"), false},     // no resource policy there
		{"AKIDB", "sqs:ReceiveMessage", q("a-in"), false},
		{"AKIDOPS", "sqs:DeleteQueue", q("anything"), true},
		{"AKIDGONE", "sqs:SendMessage", q("a-in"), false},
	} {
		err := a.Authorize(r, c.key, c.action, c.resource)
		if (err == nil) != c.ok {
			t.Errorf("%s %s %s: %v, want allowed %v", c.key, c.action, c.resource, err, c.ok)
		}
		if err != nil && !tidemq.HasCode(err, tidemq.ErrAccessDenied) {
			t.Errorf("a refusal is not AccessDenied: %v", err)
		}
	}
	if err := a.DeliveryCheck(context.Background(), "arn:aws:sns:us-east-1:000000000000:t", q("a-in")); err != nil {
		t.Errorf("the allowed topic: %v", err)
	}
	if err := a.DeliveryCheck(context.Background(), "arn:aws:sns:us-east-1:000000000000:u", q("a-in")); err == nil {
		t.Error("another topic was let in")
	}
	if !a.Allowed(r, "AKIDA", "sqs:ListQueues", q("a-x")) || a.Allowed(r, "AKIDA", "sqs:ListQueues", q("b-x")) {
		t.Error("Allowed does not decide as Authorize")
	}
	data, _ := os.ReadFile(logPath)
	if n := strings.Count(string(data), `"kind":"denied"`); n != 6 {
		t.Errorf("%d refusals audited, want 6 (Allowed audits nothing):\n%s", n, data)
	}
}

// A queue policy that cannot be read fails the call with a retryable
// server error (an SNS delivery is retried, not dropped); a queue that does
// not exist has no policy.
func TestQueuePolicyReadErrors(t *testing.T) {
	a, _ := newAuthorizer(t, nil)
	a.QueuePolicy = func(_ context.Context, q string) (string, error) {
		if q == "a-gone" {
			return "", tidemq.NonExistentQueue()
		}
		return "", errors.New("the store is down")
	}
	r := httptest.NewRequest("POST", "/", nil)
	q := func(name string) string { return tidemq.QueueARN("us-east-1", account, name) }
	if err := a.Authorize(r, "AKIDA", "sqs:ReceiveMessage", q("a-gone")); err != nil {
		t.Errorf("a queue that does not exist: %v", err)
	}
	// Team B may send anywhere by its identity policy, but cross-account a
	// queue policy must allow it too: deciding without it would be wrong.
	for _, key := range []string{"AKIDA", "AKIDB", "AKIDOPS"} {
		err := a.Authorize(r, key, "sqs:SendMessage", q("a-in"))
		if !tidemq.HasCode(err, tidemq.ErrServiceUnavailable) {
			t.Errorf("%s with the policy unreadable: %v, want ServiceUnavailable", key, err)
		}
	}
	if a.Allowed(r, "AKIDA", "sqs:SendMessage", q("a-in")) {
		t.Error("Allowed with the policy unreadable")
	}
	err := a.DeliveryCheck(context.Background(), "arn:aws:sns:us-east-1:000000000000:t", q("a-in"))
	var e *tidemq.Error
	if !errors.As(err, &e) || e.Code.Fault != tidemq.Receiver {
		t.Errorf("a delivery with the policy unreadable: %v, want a Receiver fault (retried)", err)
	}
}

// With credentials in an original form, SNS delivers into queues whose
// policy does not name it, as it did before permissions (an upgrade must
// not start dropping deliveries); the principals form decides them.
func TestDeliveryCheckOnlyWithPrincipals(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "AKIDPLAIN:secret\n")
	s, err := NewStore(path, account, sigv4.Credentials{"AKIDFLAG": "s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Authorizer{Store: s, Account: account, Region: "us-east-1",
		QueuePolicy: func(context.Context, string) (string, error) { return "", nil }}
	topic, queue := "arn:aws:sns:us-east-1:000000000000:t", tidemq.QueueARN("us-east-1", account, "q")
	if err := a.DeliveryCheck(context.Background(), topic, queue); err != nil {
		t.Errorf("plain credentials: %v", err)
	}
	// The linter decides as the server does.
	if ok, why := (Offline{Dir: s.Directory(), Account: account}).DeliveryAllowed(topic, queue, ""); !ok {
		t.Errorf("lint with plain credentials: %s", why)
	}
	writeFile(t, dir, principalsFile)
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if err := a.DeliveryCheck(context.Background(), topic, queue); !tidemq.HasCode(err, tidemq.ErrAccessDenied) {
		t.Errorf("principals form, no policy: %v, want AccessDenied", err)
	}
	if ok, _ := (Offline{Dir: s.Directory(), Account: account}).DeliveryAllowed(topic, queue, ""); ok {
		t.Error("lint with principals, no policy: allowed")
	}
}

func TestAdminChecks(t *testing.T) {
	a, _ := newAuthorizer(t, nil)
	o := AdminOptions{TriggersPath: "/tidemq/triggers", ConsoleAPIPath: "/console/api", BackupPath: "/tidemq/backup",
		QueuesPath: "/tidemq/queues", AlarmsPath: "/tidemq/alarms",
		TriggerQueue: func(name string) (string, bool) { return "a-orders", name == "t1" },
		DeadLetterSources: func(_ context.Context, q string) ([]string, error) {
			if q == "a-orders" {
				return []string{"a-in", "b-in"}, nil
			}
			return nil, tidemq.NonExistentQueue()
		}}
	server := "arn:aws:tidemq:us-east-1:000000000000:server"
	qa := "arn:aws:sqs:us-east-1:000000000000:a-orders"
	for _, c := range []struct {
		method, path, body string
		want               []check
	}{
		{"GET", "/health", "", []check{{"tidemq:GetHealth", server}}},
		{"GET", "/tidemq/queues", "", nil},
		{"POST", "/tidemq/backup", `{}`, []check{{"tidemq:Backup", server}}},
		{"POST", "/tidemq/triggers", `{"Name":"t2","Queue":"a-orders"}`, []check{
			{"tidemq:CreateTrigger", "arn:aws:tidemq:us-east-1:000000000000:trigger/t2"}, {"sqs:ReceiveMessage", qa}, {"sqs:DeleteMessage", qa}}},
		{"POST", "/tidemq/triggers", `{"Name":"t3","Queue":"a-orders","Target":{"Command":["/bin/true"]}}`, []check{
			{"tidemq:CreateTrigger", "arn:aws:tidemq:us-east-1:000000000000:trigger/t3"}, {"sqs:ReceiveMessage", qa}, {"sqs:DeleteMessage", qa},
			{"tidemq:RunCommand", server}}},
		{"PATCH", "/tidemq/triggers/t9", `{"Target":{"Function":{"Runtime":"python3.12"}}}`, []check{
			{"tidemq:UpdateTrigger", "arn:aws:tidemq:us-east-1:000000000000:trigger/t9"}, {"tidemq:RunCommand", server}}},
		{"DELETE", "/tidemq/triggers/t1", "", []check{
			{"tidemq:DeleteTrigger", "arn:aws:tidemq:us-east-1:000000000000:trigger/t1"}, {"sqs:ReceiveMessage", qa}, {"sqs:DeleteMessage", qa}}},
		{"POST", "/tidemq/triggers/t9/enable", "", []check{{"tidemq:UpdateTrigger", "arn:aws:tidemq:us-east-1:000000000000:trigger/t9"}}},
		{"GET", "/console/api/messages?queue=a-orders", "", []check{{"tidemq:PeekMessages", qa}}},
		{"POST", "/console/api/redrive", `{"queue":"a-orders","destination":"b"}`, []check{
			{"tidemq:Redrive", qa}, {"sqs:SendMessage", "arn:aws:sqs:us-east-1:000000000000:b"}}},
		{"POST", "/console/api/purge", `{"queue":"a-orders"}`, []check{{"sqs:PurgeQueue", qa}}},
		{"POST", "/console/api/redrive", `{"queue":"a-orders"}`, []check{ // back to the sources: each is sent into
			{"tidemq:Redrive", qa}, {"sqs:SendMessage", "arn:aws:sqs:us-east-1:000000000000:a-in"},
			{"sqs:SendMessage", "arn:aws:sqs:us-east-1:000000000000:b-in"}}},
		{"POST", "/console/api/redrive", `{"queue":"a-gone"}`, []check{{"tidemq:Redrive", "arn:aws:sqs:us-east-1:000000000000:a-gone"}}},
		{"GET", "/tidemq/new-thing", "", []check{{"tidemq:Admin", server}}},
	} {
		r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		got, err := a.adminChecks(o, r)
		if err != nil {
			t.Errorf("%s %s: %v", c.method, c.path, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s %s: %v, want %v", c.method, c.path, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s %s: %v, want %v", c.method, c.path, got, c.want)
			}
		}
	}
	// A trigger's queue is in the region the request is signed for, as the
	// trigger API resolves it.
	r := httptest.NewRequest("POST", "/tidemq/triggers", strings.NewReader(`{"Name":"t4","Queue":"a-orders"}`))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDA/20261203/eu-west-1/sqs/aws4_request, SignedHeaders=host, Signature=00")
	got, err := a.adminChecks(o, r)
	if qe := "arn:aws:sqs:eu-west-1:000000000000:a-orders"; err != nil || len(got) != 3 || got[1] != (check{"sqs:ReceiveMessage", qe}) {
		t.Errorf("a trigger created in eu-west-1: %v %v, want its queue %s", got, err, qe)
	}
	// The guard refuses team A a backup and audits the operator's trigger change.
	g := a.Guard(o)
	if _, err := g(httptest.NewRequest("POST", "/tidemq/backup", strings.NewReader(`{}`)), "AKIDA"); !tidemq.HasCode(err, tidemq.ErrAccessDenied) {
		t.Errorf("team A's backup: %v", err)
	}
	// A body that is not exactly one JSON value is refused before any check:
	// the handler reads the first value, the checks would have seen none.
	for _, c := range []struct{ path, body string }{
		{"/tidemq/triggers", `{"Name":"t2","Queue":"a-orders","Target":{"Command":["/bin/sh"]}} junk`},
		{"/tidemq/triggers", `{"Name":"t2","Queue":"a-orders","Target":{"Command":["/bin/sh"]}}{}`},
		{"/tidemq/triggers", `not json`},
		{"/console/api/redrive", `{"queue":"a-orders","destination":"b"} x`},
	} {
		_, err := g(httptest.NewRequest("POST", c.path, strings.NewReader(c.body)), "AKIDA")
		if !tidemq.HasCode(err, tidemq.ErrMalformedInput) {
			t.Errorf("POST %s %s: %v, want MalformedInput", c.path, c.body, err)
		}
	}
	done, err := g(httptest.NewRequest("DELETE", "/tidemq/triggers/t1", nil), "AKIDOPS")
	if err != nil || done == nil {
		t.Fatalf("the operator deleting a trigger: %v", err)
	}
	done(204)
}

// Reloads race with decisions: a request sees one Directory (run with -race).
func TestReloadWhileDeciding(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, principalsFile)
	s, err := NewStore(path, account, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Authorizer{Store: s, Account: account, Region: "us-east-1"}
	r := httptest.NewRequest("POST", "/", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			if i%2 == 0 {
				writeFile(t, dir, "AKIDA:root-now\n")
			} else {
				writeFile(t, dir, principalsFile)
			}
			_, _ = s.Reload()
		}
	}()
	arn := tidemq.QueueARN("us-east-1", account, "a-x")
	for {
		select {
		case <-done:
			return
		default:
		}
		if err := a.Authorize(r, "AKIDA", "sqs:SendMessage", arn); err != nil {
			t.Fatalf("AKIDA may send in both versions of the file: %v", err)
		}
	}
}
