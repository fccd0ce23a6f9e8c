package e2e

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `tidemq serve` as an operator runs it: flags, environment, persistence,
// shutdown and authentication.

// serveFlags is every flag of `tidemq serve`, which --help must document
// together with its environment variable.
var serveFlags = []string{
	"listen", "data-dir", "in-memory", "account-id", "region", "public-url", "auth",
	"credentials", "credentials-file", "log-level", "log-format", "shutdown-timeout",
	"auth-exempt", "read-timeout", "write-timeout", "idle-timeout", "max-connections",
	"max-body-memory-mib", "tls-cert", "tls-key", "allowed-hosts",
}

func TestServeHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"serve", "--help"}, {"serve", "-h"}, {"help", "serve"}} {
		stdout, stderr, code := runTidemq(t, nil, args...)
		if code != 0 {
			t.Errorf("tidemq %s: exit %d, stderr %s", strings.Join(args, " "), code, stderr)
			continue
		}
		for _, f := range serveFlags {
			env := "$TIDEMQ_" + strings.ToUpper(strings.ReplaceAll(f, "-", "_"))
			if !strings.Contains(stdout, "--"+f+" ") {
				t.Errorf("tidemq %s does not document --%s:\n%s", strings.Join(args, " "), f, stdout)
			}
			if !strings.Contains(stdout, env) {
				t.Errorf("tidemq %s does not name %s for --%s", strings.Join(args, " "), env, f)
			}
		}
	}
	// Flags added later are held to the same rule: each line of the flag
	// list names the flag's variable.
	stdout, _, _ := runTidemq(t, nil, "serve", "--help")
	flagLine := regexp.MustCompile(`^\s+(?:-\w, )?--([a-z0-9-]+)`)
	seen := 0
	for _, line := range strings.Split(stdout, "\n") {
		m := flagLine.FindStringSubmatch(line)
		if m == nil || m[1] == "help" {
			continue
		}
		seen++
		if env := "[$TIDEMQ_" + strings.ToUpper(strings.ReplaceAll(m[1], "-", "_")) + "]"; !strings.Contains(line, env) {
			t.Errorf("serve --help: the line for --%s does not name %s: %q", m[1], env, line)
		}
	}
	if seen < len(serveFlags) {
		t.Errorf("serve --help lists %d flags, want at least %d", seen, len(serveFlags))
	}

	stdout, _, code := runTidemq(t, nil, "--help")
	if code != 0 || !strings.Contains(stdout, "serve") {
		t.Errorf("tidemq --help (exit %d) does not list the serve command:\n%s", code, stdout)
	}
}

func TestServeHealth(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	resp, err := http.Get(s.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &body) != nil || !reflect.DeepEqual(body, map[string]any{"status": "ok"}) {
		t.Errorf("GET /health = %s %q, want 200 {\"status\":\"ok\"}", resp.Status, raw)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("GET /health Content-Type = %q, want application/json", ct)
	}
}

func TestServeBadConfiguration(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() }) // not defer: the subtests run after this function returns
	aFile := filepath.Join(t.TempDir(), "not-a-directory")
	if err := os.WriteFile(aFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	base := []string{"serve", "--listen", "127.0.0.1:0", "--in-memory"}
	for _, tc := range []struct {
		name string
		args []string // after base unless they start with "serve"
		env  []string
		want []string // all must appear on stderr
	}{
		{"UnknownFlag", []string{"--no-such-flag"}, nil, []string{"unknown flag", "--no-such-flag"}},
		{"PositionalArgument", []string{"extra"}, nil, []string{"extra"}},
		{"LogLevel", []string{"--log-level", "loud"}, nil, []string{"--log-level", "loud"}},
		{"LogFormat", []string{"--log-format", "xml"}, nil, []string{"--log-format", "xml"}},
		{"ShutdownTimeoutWithoutUnit", []string{"--shutdown-timeout", "5"}, nil, []string{"--shutdown-timeout", "5"}},
		{"InMemoryNotABool", []string{"--in-memory=maybe"}, nil, []string{"--in-memory", "maybe"}},
		{"ListenPortOutOfRange", []string{"--listen", "127.0.0.1:99999"}, nil, []string{"listen", "99999"}},
		{"ListenAddressInUse", []string{"--listen", busy.Addr().String()}, nil, []string{"listen", busy.Addr().String(), "address already in use"}},
		{"PublicURLScheme", []string{"--public-url", "ftp://queues.example.test"}, nil, []string{"--public-url", "ftp://queues.example.test"}},
		{"AuthWithoutCredentials", []string{"--auth"}, nil, []string{"--auth", "credentials"}},
		{"CredentialsWithoutAuth", []string{"--credentials", "AKID:SECRET"}, nil, []string{"--auth"}},
		{"ConfigParamWithoutConfig", []string{"--config-param", "Stage=prod"}, nil, []string{"--config-param", "--config"}},
		{"MalformedCredentials", []string{"--auth", "--credentials", "AKID-without-secret"}, nil, []string{"--credentials"}},
		{"MissingCredentialsFile", []string{"--auth", "--credentials-file", "/nonexistent/credentials"}, nil, []string{"--credentials-file", "/nonexistent/credentials"}},
		{"DataDirIsAFile", []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", aFile}, nil, []string{aFile}},
		{"AccountIDNotDigits", []string{"--account-id", "my-account"}, nil, []string{"--account-id", "my-account"}},
		{"RegionWithColon", []string{"--region", "us:east:1"}, nil, []string{"--region", "us:east:1"}},
		{"EmptyRegion", []string{"--region="}, nil, []string{"--region"}},
		{"EnvAccountIDTooShort", nil, []string{"TIDEMQ_ACCOUNT_ID=12345"}, []string{"account-id", "12345"}},
		{"EnvShutdownTimeout", nil, []string{"TIDEMQ_SHUTDOWN_TIMEOUT=soon"}, []string{"$TIDEMQ_SHUTDOWN_TIMEOUT", "soon"}},
		{"EnvInMemory", []string{"serve", "--listen", "127.0.0.1:0"}, []string{"TIDEMQ_IN_MEMORY=maybe"}, []string{"$TIDEMQ_IN_MEMORY", "maybe"}},
		{"EnvLogLevel", nil, []string{"TIDEMQ_LOG_LEVEL=verbose"}, []string{"log-level", "verbose"}},
		{"EnvListen", []string{"serve", "--in-memory"}, []string{"TIDEMQ_LISTEN=not-an-address"}, []string{"not-an-address"}},
		{"AuthExemptUnknown", []string{"--auth", "--credentials", "A:B", "--auth-exempt", "health,queues"}, nil, []string{"--auth-exempt", "queues"}},
		{"AuthExemptWithoutAuth", []string{"--auth-exempt", "metrics"}, nil, []string{"--auth-exempt", "--auth"}},
		{"WriteTimeoutBelowLongPoll", []string{"--write-timeout", "40s"}, nil, []string{"--write-timeout", "--read-timeout"}},
		{"TLSCertWithoutKey", []string{"--tls-cert", aFile}, nil, []string{"--tls-cert", "--tls-key"}},
		{"TLSCertNotPEM", []string{"--tls-cert", aFile, "--tls-key", aFile}, nil, []string{"TLS", aFile}},
		{"ZeroConnections", []string{"--max-connections", "0"}, nil, []string{"--max-connections"}},
		{"PprofOnNetwork", []string{"--pprof-listen", "0.0.0.0:0"}, nil, []string{"--pprof-listen", "loopback"}},
		{"CommandsOpenToNetwork", []string{"--allow-trigger-commands", "--listen", "0.0.0.0:0"}, nil, []string{"--allow-trigger-commands", "--auth"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append(append([]string{}, base...), tc.args...)
			if len(tc.args) > 0 && tc.args[0] == "serve" {
				args = tc.args
			}
			stdout, stderr, code := runTidemq(t, tc.env, args...)
			if code == 0 {
				t.Fatalf("tidemq %s (env %v) exited 0, want an error; stderr:\n%s", strings.Join(args, " "), tc.env, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("tidemq %s (env %v): stderr does not mention %q:\n%s", strings.Join(args, " "), tc.env, w, stderr)
				}
			}
			// One clear line, not a usage dump or a stack trace.
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); !strings.HasPrefix(lines[len(lines)-1], "tidemq: ") ||
				strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "Usage:") {
				t.Errorf("tidemq %s: want a single 'tidemq: ...' error line, got:\n%s", strings.Join(args, " "), stderr)
			}
			if stdout != "" {
				t.Errorf("tidemq %s wrote to stdout:\n%s", strings.Join(args, " "), stdout)
			}
		})
	}
}

func TestServeEnvironment(t *testing.T) {
	t.Parallel()

	t.Run("AllFromEnv", func(t *testing.T) {
		t.Parallel()
		s := launch(t, []string{"serve"}, []string{
			"TIDEMQ_LISTEN=127.0.0.1:0",
			"TIDEMQ_IN_MEMORY=true",
			"TIDEMQ_ACCOUNT_ID=123456789012",
			"TIDEMQ_REGION=eu-west-1",
			"TIDEMQ_PUBLIC_URL=http://sqs.example.test:9324",
			"TIDEMQ_LOG_FORMAT=json",
			"TIDEMQ_LOG_LEVEL=debug",
			"TIDEMQ_SHUTDOWN_TIMEOUT=3s",
		})
		url := s.createQueue(t, "env-q", nil)
		if want := "http://sqs.example.test:9324/123456789012/env-q"; url != want {
			t.Errorf("QueueUrl = %s, want %s (TIDEMQ_PUBLIC_URL and TIDEMQ_ACCOUNT_ID)", url, want)
		}
		if arn := s.queueAttrs(t, url, "QueueArn")["QueueArn"]; arn != "arn:aws:sqs:eu-west-1:123456789012:env-q" {
			t.Errorf("QueueArn = %s, want it in eu-west-1 and 123456789012 (TIDEMQ_REGION)", arn)
		}
		s.stop()
		if _, err := os.Stat(filepath.Join(s.dir, "tidemq-data")); !os.IsNotExist(err) {
			t.Errorf("TIDEMQ_IN_MEMORY=true still created ./tidemq-data (%v)", err)
		}
		// TIDEMQ_LOG_FORMAT=json: every line is a JSON object;
		// TIDEMQ_LOG_LEVEL=debug: requests are logged.
		sawListening, sawDebug := false, false
		for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("TIDEMQ_LOG_FORMAT=json, but a log line is not JSON: %q", line)
				continue
			}
			if rec["msg"] == "tidemq listening" {
				sawListening = true
				if rec["store"] != "memory" || rec["region"] != "eu-west-1" || rec["account"] != "123456789012" {
					t.Errorf("listening line %v does not reflect the environment", rec)
				}
			}
			if rec["level"] == "DEBUG" {
				sawDebug = true
			}
		}
		if !sawListening || !sawDebug {
			t.Errorf("JSON logs: listening line %v, a DEBUG line %v; want both:\n%s", sawListening, sawDebug, s.logs)
		}
	})

	t.Run("FlagsWinOverEnv", func(t *testing.T) {
		t.Parallel()
		s := launch(t, []string{"serve", "--listen", "127.0.0.1:0", "--in-memory", "--account-id", "222222222222"},
			[]string{"TIDEMQ_LISTEN=not-an-address", "TIDEMQ_ACCOUNT_ID=111111111111", "TIDEMQ_REGION=ap-south-1"})
		url := s.createQueue(t, "flag-q", nil)
		if !strings.HasSuffix(url, "/222222222222/flag-q") {
			t.Errorf("QueueUrl = %s, want the --account-id flag's 222222222222", url)
		}
		if arn := s.queueAttrs(t, url, "QueueArn")["QueueArn"]; arn != "arn:aws:sqs:ap-south-1:222222222222:flag-q" {
			t.Errorf("QueueArn = %s, want region from TIDEMQ_REGION and account from the flag", arn)
		}
	})
}

func TestServePersistence(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data") // does not exist yet

	s := startServer(t, "--data-dir", dataDir)
	q := s.createQueue(t, "durable", map[string]string{"VisibilityTimeout": "300"})
	s.mustCall(t, "TagQueue", map[string]any{"QueueUrl": q, "Tags": map[string]string{"team": "crm"}})
	inflightID := s.send(t, q, "in flight")
	ms := s.receive(t, q, map[string]any{"WaitTimeSeconds": 2})
	if len(ms) != 1 {
		t.Fatalf("receive: %d messages, want 1", len(ms))
	}
	inflightHandle := str(ms[0], "ReceiptHandle")
	visibleID := s.send(t, q, "visible")
	s.mustCall(t, "SendMessage", map[string]any{"QueueUrl": q, "MessageBody": "delayed", "DelaySeconds": 600})
	s.wantDepth(t, q, 1, 1, 1)
	fifo := s.createQueue(t, "durable.fifo", map[string]string{"FifoQueue": "true"})
	fifoSend := map[string]any{"QueueUrl": fifo, "MessageBody": "order 1", "MessageGroupId": "orders", "MessageDeduplicationId": "order-1"}
	fifoID := str(s.mustCall(t, "SendMessage", fifoSend), "MessageId")
	s.stop()

	s = startServer(t, "--data-dir", dataDir)
	q = str(s.mustCall(t, "GetQueueUrl", map[string]any{"QueueName": "durable"}), "QueueUrl")
	if q == "" {
		t.Fatal("queue durable is gone after a restart")
	}
	if vt := s.queueAttrs(t, q, "VisibilityTimeout")["VisibilityTimeout"]; vt != "300" {
		t.Errorf("VisibilityTimeout after restart = %q, want 300", vt)
	}
	if tags := s.mustCall(t, "ListQueueTags", map[string]any{"QueueUrl": q})["Tags"]; !reflect.DeepEqual(tags, map[string]any{"team": "crm"}) {
		t.Errorf("tags after restart = %v, want team=crm", tags)
	}
	s.wantDepth(t, q, 1, 1, 1)
	ms = s.receive(t, q, map[string]any{"MaxNumberOfMessages": 10, "WaitTimeSeconds": 1, "AttributeNames": []string{"All"}})
	if len(ms) != 1 || str(ms[0], "MessageId") != visibleID || str(ms[0], "Body") != "visible" || str(ms[0], "Attributes", "ApproximateReceiveCount") != "1" {
		t.Errorf("receive after restart = %v, want only the visible message %s, received once; the in-flight one (%s) must stay in flight", ms, visibleID, inflightID)
	}
	s.wantDepth(t, q, 0, 1, 2)
	// The consumer that held the message before the restart can still delete it.
	if status, out := s.call(t, "DeleteMessage", map[string]any{"QueueUrl": q, "ReceiptHandle": inflightHandle}); status != http.StatusOK {
		t.Errorf("DeleteMessage with a receipt handle from before the restart: %d %v", status, out)
	}
	s.wantDepth(t, q, 0, 1, 1)

	// The FIFO deduplication window survives the restart too.
	fifo = str(s.mustCall(t, "GetQueueUrl", map[string]any{"QueueName": "durable.fifo"}), "QueueUrl")
	fifoSend["QueueUrl"] = fifo
	if again := str(s.mustCall(t, "SendMessage", fifoSend), "MessageId"); again != fifoID {
		t.Errorf("resending dedup id order-1 after a restart gave MessageId %s, want the original %s", again, fifoID)
	}
	s.wantDepth(t, fifo, 1, 0, 0)
}

func TestServeInMemoryDoesNotPersist(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--in-memory")
	q := s.createQueue(t, "ephemeral", nil)
	s.send(t, q, "gone soon")
	s.stopWith(syscall.SIGINT) // Ctrl-C, as in a terminal: a clean exit too
	if entries, _ := os.ReadDir(s.dir); len(entries) != 0 {
		t.Errorf("--in-memory wrote to its working directory: %v", entries)
	}

	s = startServer(t, "--in-memory")
	if urls := s.mustCall(t, "ListQueues", map[string]any{})["QueueUrls"]; urls != nil && len(urls.([]any)) != 0 {
		t.Errorf("a fresh --in-memory server lists %v", urls)
	}
	if status, out := s.call(t, "GetQueueUrl", map[string]any{"QueueName": "ephemeral"}); status != http.StatusBadRequest {
		t.Errorf("GetQueueUrl ephemeral on a fresh --in-memory server = %d %v, want 400 QueueDoesNotExist", status, out)
	}
}

func TestServeShutdownDuringLongPoll(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	q := s.createQueue(t, "waiting", nil)

	type result struct {
		status int
		out    map[string]any
		err    error
		at     time.Time
	}
	done := make(chan result, 1)
	go func() {
		status, out, err := s.tryCall("ReceiveMessage", map[string]any{"QueueUrl": q, "WaitTimeSeconds": 20})
		done <- result{status, out, err, time.Now()}
	}()
	// Let the poll reach the server (nothing to observe it by; if it has not
	// arrived yet, the check below still holds: it must not hang).
	time.Sleep(700 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("the 20s long poll returned before SIGTERM: %+v", r)
	default:
	}

	start := time.Now()
	took := s.stop()
	if took > 5*time.Second {
		t.Errorf("the server took %v to exit with a long poll open; want well under the 20s wait", took)
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("the open long poll failed instead of getting an empty answer: %v", r.err)
		}
		if r.status != http.StatusOK || len(messages(r.out)) != 0 {
			t.Errorf("the open long poll got %d %v, want 200 with no messages", r.status, r.out)
		}
		if d := r.at.Sub(start); d > 5*time.Second {
			t.Errorf("the long poll was answered %v after SIGTERM", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll got no answer within 10s of SIGTERM")
	}
}

func TestServeAuth(t *testing.T) {
	t.Parallel()
	requireAWS(t)

	t.Run("CredentialsFlag", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, "--auth", "--credentials", "AKIDE2EAUTH:s3cr3t/with+chars,AKIDSECOND:other")
		cli := newCLI(t, s)
		var out queueURLOut
		cli.withKeys("AKIDE2EAUTH", "s3cr3t/with+chars").ok(t, &out, "create-queue", "--queue-name", "signed")
		if !strings.HasSuffix(out.QueueUrl, "/signed") {
			t.Errorf("create-queue with the right keys = %q", out.QueueUrl)
		}
		cli.withKeys("AKIDSECOND", "other").ok(t, nil, "get-queue-url", "--queue-name", "signed")
		cli.withKeys("AKIDE2EAUTH", "wrong-secret").fails(t, "SignatureDoesNotMatch", "", "list-queues")
		cli.withKeys("AKIDUNKNOWN", "s3cr3t/with+chars").fails(t, "InvalidClientTokenId", "", "list-queues")

		if status, out := s.call(t, "ListQueues", map[string]any{}); status != http.StatusForbidden || !strings.HasSuffix(str(out, "__type"), "MissingAuthenticationToken") {
			t.Errorf("an unsigned request under --auth got %d %v, want 403 MissingAuthenticationToken", status, out)
		}
		resp, err := http.Get(s.url + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET /health under --auth = %s, want 403 without credentials (--auth-exempt health opens it)", resp.Status)
		}
	})

	t.Run("CredentialsFileFromEnv", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "credentials")
		if err := os.WriteFile(file, []byte("[default]\naws_access_key_id = AKIDFROMFILE\naws_secret_access_key = file-secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s := launch(t, []string{"serve", "--listen", "127.0.0.1:0", "--in-memory"}, []string{"TIDEMQ_AUTH=true", "TIDEMQ_CREDENTIALS_FILE=" + file})
		cli := newCLI(t, s)
		cli.withKeys("AKIDFROMFILE", "file-secret").ok(t, nil, "list-queues")
		cli.fails(t, "InvalidClientTokenId", "", "list-queues")
	})
}

func TestServePublicURL(t *testing.T) {
	t.Parallel()
	requireAWS(t)
	s := startServer(t, "--public-url", "http://queues.example.test:8080")
	cli := newCLI(t, s)
	var out queueURLOut
	cli.ok(t, &out, "create-queue", "--queue-name", "public")
	want := "http://queues.example.test:8080/" + account + "/public"
	if out.QueueUrl != want {
		t.Fatalf("create-queue QueueUrl = %s, want %s", out.QueueUrl, want)
	}
	// That URL works as QueueUrl even though requests go to the real address.
	var sent sendOut
	cli.ok(t, &sent, "send-message", "--queue-url", want, "--message-body", "via the public URL")
	if got := str(s.mustCall(t, "GetQueueUrl", map[string]any{"QueueName": "public"}), "QueueUrl"); got != want {
		t.Errorf("GetQueueUrl = %s, want %s", got, want)
	}
	if urls, _ := s.mustCall(t, "ListQueues", map[string]any{})["QueueUrls"].([]any); len(urls) != 1 || urls[0] != want {
		t.Errorf("ListQueues = %v, want [%s]", urls, want)
	}
	if ms := s.receive(t, want, map[string]any{"WaitTimeSeconds": 2}); len(ms) != 1 || str(ms[0], "MessageId") != sent.MessageId {
		t.Errorf("receive via the public URL = %v, want message %s", ms, sent.MessageId)
	}

	// A trailing slash does not double the slash.
	s2 := startServer(t, "--public-url", "https://queues.example.test/")
	if got := s2.createQueue(t, "slash", nil); got != "https://queues.example.test/"+account+"/slash" {
		t.Errorf("with --public-url https://queues.example.test/ QueueUrl = %s", got)
	}
}
