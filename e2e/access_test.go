package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tidemq/tidemq/api/sigv4"
)

// Issue 24: two teams and an operator on one tidemq under --auth, with the
// README's example principals file (docs/principals.example.yaml). Each
// team works on its own queues; every cross-team call gets AccessDenied and
// changes nothing; queue policies grant (and stop granting) at once; an
// SNS topic delivers into another team's queue only while that queue's
// policy allows it; refusals and admin changes land in the audit log.

const (
	teamAKey, teamASecret = "AKIATEAMA00000000001", "team-a-secret"
	teamBKey, teamBSecret = "AKIATEAMB00000000001", "team-b-secret"
	opsKey, opsSecret     = "AKIAOPS0000000000001", "ops-secret"
)

func TestAccessTwoTeamsAndAnOperator(t *testing.T) {
	t.Parallel()
	requireAWS(t)
	creds, err := filepath.Abs(filepath.Join("..", "docs", "principals.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	s := startServer(t, "--auth", "--credentials-file", creds, "--audit-log", auditLog, "--auth-exempt", "health")
	cli := newCLI(t, s)
	a, b, ops := cli.withKeys(teamAKey, teamASecret), cli.withKeys(teamBKey, teamBSecret), cli.withKeys(opsKey, opsSecret)

	// Each team works on its own queues.
	dlq := a.createQueue(t, "team-a-orders-dlq")
	var arn struct{ Attributes map[string]string }
	a.ok(t, &arn, "get-queue-attributes", "--queue-url", dlq, "--attribute-names", "QueueArn")
	redrive := `{"RedrivePolicy":"{\"deadLetterTargetArn\":\"` + arn.Attributes["QueueArn"] + `\",\"maxReceiveCount\":\"1\"}","VisibilityTimeout":"0"}`
	orders := a.createQueue(t, "team-a-orders", "--attributes", redrive)
	a.ok(t, nil, "send-message", "--queue-url", orders, "--message-body", "order-1")
	a.ok(t, nil, "receive-message", "--queue-url", orders)
	a.ok(t, nil, "receive-message", "--queue-url", orders) // the second receive moves it to the DLQ
	b.createQueue(t, "team-b-work")
	a.ok(t, nil, "send-message", "--queue-url", orders, "--message-body", "order-2")

	// Team B's cross-team calls are refused: these with the AWS CLI, the
	// others (send, SetQueueAttributes, GetQueueUrl, CreateQueue,
	// AddPermission) with boto3 below (each CLI run is a Python process:
	// seconds on a busy machine).
	for _, args := range [][]string{
		{"receive-message", "--queue-url", orders},
		{"purge-queue", "--queue-url", dlq},
		{"delete-queue", "--queue-url", orders},
		{"start-message-move-task", "--source-arn", arn.Attributes["QueueArn"]},
	} {
		b.fails(t, "AccessDenied", "user/team-b is not authorized to perform: sqs:", args...)
	}
	// Team A's own deny: no one of team A deletes a dead-letter queue.
	a.fails(t, "AccessDenied", "explicit deny", "delete-queue", "--queue-url", dlq)
	// ...and a listing shows only what the caller may see.
	var list struct{ QueueUrls []string }
	b.ok(t, &list, "list-queues")
	if len(list.QueueUrls) != 1 || !strings.HasSuffix(list.QueueUrls[0], "/team-b-work") {
		t.Errorf("team B lists %v, want only its team-b-work", list.QueueUrls)
	}
	ops.ok(t, &list, "list-queues")
	if len(list.QueueUrls) != 3 {
		t.Errorf("the operator lists %v, want all three queues", list.QueueUrls)
	}

	// The trigger API: team B cannot hang a trigger on team A's queue.
	envB := clientEnv(teamBKey, teamBSecret)
	if _, errOut, code := runTidemq(t, envB, "trigger", "create", "team-b-steal", "--queue", "team-a-orders", "--url", "http://127.0.0.1:1/", "--endpoint", s.url); code == 0 || !strings.Contains(errOut, "is not authorized to perform") {
		t.Errorf("team B's trigger on team A's queue: exit %d, %s", code, errOut)
	}
	envA := clientEnv(teamAKey, teamASecret)
	if out, errOut, code := runTidemq(t, envA, "trigger", "create", "team-a-hook", "--queue", "team-a-orders", "--url", "http://127.0.0.1:1/", "--enabled=false", "--endpoint", s.url); code != 0 {
		t.Errorf("team A's trigger on its queue: exit %d, %s %s", code, out, errOut)
	}
	if _, errOut, code := runTidemq(t, envB, "trigger", "delete", "team-a-hook", "--endpoint", s.url); code == 0 || !strings.Contains(errOut, "is not authorized to perform") {
		t.Errorf("team B deleting team A's trigger: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runTidemq(t, envB, "backup", filepath.Join(t.TempDir(), "b"), "--endpoint", s.url); code == 0 || !strings.Contains(errOut, "is not authorized to perform") {
		t.Errorf("team B asking for a backup: exit %d, %s", code, errOut)
	}

	// Nothing changed: the queues, their messages and attributes are as team A left them.
	var attrs struct{ Attributes map[string]string }
	a.ok(t, &attrs, "get-queue-attributes", "--queue-url", orders, "--attribute-names", "All")
	if attrs.Attributes["VisibilityTimeout"] != "0" || attrs.Attributes["ApproximateNumberOfMessages"] != "1" || attrs.Attributes["Policy"] != "" {
		t.Errorf("team A's queue changed: %v", attrs.Attributes)
	}
	a.ok(t, &attrs, "get-queue-attributes", "--queue-url", dlq, "--attribute-names", "ApproximateNumberOfMessages")
	if attrs.Attributes["ApproximateNumberOfMessages"] != "1" {
		t.Errorf("team A's DLQ changed: %v", attrs.Attributes)
	}
	if out, errOut, code := runTidemq(t, clientEnv(opsKey, opsSecret), "trigger", "list", "--endpoint", s.url); code != 0 || !strings.Contains(out, "team-a-hook") {
		t.Errorf("team A's trigger is gone: exit %d %s %s", code, out, errOut)
	}

	// The operator may do what the teams may not, and team A may redrive its own DLQ.
	a.ok(t, nil, "start-message-move-task", "--source-arn", arn.Attributes["QueueArn"])
	ops.ok(t, nil, "purge-queue", "--queue-url", orders)

	// The console: each principal sees its own queues; a purge of another
	// team's queue is refused.
	for _, c := range []struct {
		key, secret string
		want        []string
	}{
		{teamBKey, teamBSecret, []string{"team-b-work"}},
		{opsKey, opsSecret, []string{"team-a-orders", "team-a-orders-dlq", "team-b-work"}},
	} {
		status, body := signedAdmin(t, c.key, c.secret, http.MethodGet, s.url+"/console/api/overview", "")
		var ov struct{ Queues []struct{ Name string } }
		_ = json.Unmarshal([]byte(body), &ov)
		var names []string
		for _, q := range ov.Queues {
			names = append(names, q.Name)
		}
		slices.Sort(names)
		if status != http.StatusOK || !slices.Equal(names, c.want) {
			t.Errorf("console overview of %s: %d %v, want %v (%s)", c.key, status, names, c.want, body)
		}
	}
	// GET /tidemq/queues (what `tidemq top` reads) lists the same.
	for _, c := range []struct {
		key, secret string
		want        int
	}{{teamBKey, teamBSecret, 1}, {opsKey, opsSecret, 3}} {
		status, body := signedAdmin(t, c.key, c.secret, http.MethodGet, s.url+"/tidemq/queues", "")
		var qs struct{ Queues []struct{ Name string } }
		_ = json.Unmarshal([]byte(body), &qs)
		if status != http.StatusOK || len(qs.Queues) != c.want || c.want == 1 && qs.Queues[0].Name != "team-b-work" {
			t.Errorf("GET /tidemq/queues of %s: %d %s, want %d queues", c.key, status, body, c.want)
		}
	}
	if status, body := signedAdmin(t, teamBKey, teamBSecret, http.MethodPost, s.url+"/console/api/purge", `{"queue":"team-a-orders"}`); status != http.StatusForbidden || !strings.Contains(body, "AccessDenied") {
		t.Errorf("team B's console purge of team A's queue: %d %s", status, body)
	}

	// boto3: queue policies and SNS deliveries.
	requireBoto3(t)
	r := runTool(t, clientEnv(teamAKey, teamASecret), "python3", filepath.Join("testdata", "access_scenarios.py"), s.url)
	if r.code != 0 {
		t.Fatalf("access_scenarios.py:\n%s", r)
	}

	// The audit log holds the refusals and the admin change.
	events := readAudit(t, auditLog)
	var deniedB, deniedSNS, created bool
	for _, e := range events {
		switch {
		case e["kind"] == "denied" && e["principal"] == "arn:aws:iam::"+account+":user/team-b" && e["action"] == "sqs:PurgeQueue":
			deniedB = deniedB || e["resource"] == arn.Attributes["QueueArn"] && strings.HasPrefix(e["source"].(string), "127.0.0.1:")
		case e["kind"] == "denied" && e["principal"] == "sns.amazonaws.com":
			deniedSNS = true
		case e["kind"] == "change" && e["action"] == "tidemq:CreateTrigger":
			created = e["principal"] == "arn:aws:iam::"+account+":user/team-a" && e["status"] == float64(201)
		}
	}
	if !deniedB || !deniedSNS || !created {
		t.Errorf("audit log: team B's purge %v, SNS's refused delivery %v, team A's trigger %v; log:\n%v", deniedB, deniedSNS, created, events)
	}
}

// The credentials file is reloaded when it changes: a key added works
// within moments, one removed stops working, and a broken file leaves the
// previous one in force.
func TestAccessCredentialsReload(t *testing.T) {
	t.Parallel()
	requireAWS(t)
	creds := filepath.Join(t.TempDir(), "credentials")
	write := func(s string) {
		tmp := creds + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, creds); err != nil {
			t.Fatal(err)
		}
	}
	write("AKIDOLD:old-secret\n") // the original form: a root user
	s := startServer(t, "--auth", "--credentials-file", creds, "--credentials-reload", "100ms")
	cli := newCLI(t, s)
	old, reader := cli.withKeys("AKIDOLD", "old-secret"), cli.withKeys("AKIDNEW", "new-secret")
	old.createQueue(t, "reload-q")
	write(`principals:
  - name: reader
    keys: ["AKIDNEW:new-secret"]
    policy:
      Statement:
        - Effect: Allow
          Action: "sqs:GetQueueUrl"
          Resource: "*"
`)
	deadline := time.Now().Add(10 * time.Second)
	for reader.run(t, "get-queue-url", "--queue-name", "reload-q").code != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the new key does not work 10 s after the file changed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	reader.fails(t, "AccessDenied", "", "delete-queue", "--queue-url", s.url+"/"+account+"/reload-q")
	old.fails(t, "InvalidClientTokenId", "", "list-queues")
	write("principals: [this is not\n")
	time.Sleep(500 * time.Millisecond)
	reader.ok(t, nil, "get-queue-url", "--queue-name", "reload-q")
	if !strings.Contains(s.logs.String(), "does not load; the previous credentials stay in force") {
		t.Error("a broken credentials file was not reported")
	}
}

// signedAdmin sends one admin request signed for the "tidemq" service, as
// the console's JavaScript and tidemq's commands sign them.
func signedAdmin(t *testing.T, key, secret, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &sigv4.Transport{
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""), Region: "us-east-1", Service: "tidemq"}}
	return sendRequest(t, c, req)
}

func readAudit(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}
