// Package e2e runs the tidemq binary as a user would and drives it with the
// clients users have: the AWS CLI, boto3 and plain HTTP.
//
// TestMain builds cmd/tidemq once; every test starts its own server process
// on 127.0.0.1:0 and stops it with SIGTERM, failing if it does not exit
// cleanly. The AWS CLI and boto3 are required when CI=true and skipped
// otherwise.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	// tidemqBin is the tidemq executable built by TestMain.
	tidemqBin string
	// awsConfigFile and awsCredentialsFile isolate the CLI and boto3 from any
	// profile on the machine.
	awsConfigFile      string
	awsCredentialsFile string
)

const (
	startTimeout = 20 * time.Second // until the server logs its address and /health answers
	stopTimeout  = 10 * time.Second // from SIGTERM to exit
	toolTimeout  = 60 * time.Second // one aws or python3 run
	// cliTimeout bounds one run of a tidemq client command (apply, dlq,
	// trigger, ...): they answer in well under a second on an idle
	// machine, and have taken over 10 s on a loaded 2-core one.
	cliTimeout = 30 * time.Second
	// scenarioTimeout bounds one boto3 scenario script: six run at once and
	// mostly wait on real time, and a shared 2-core CI machine under load
	// has taken over a minute to start them and run them through.
	scenarioTimeout = 3 * time.Minute
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "tidemq-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: find module root:", err)
		return 1
	}
	tidemqBin = filepath.Join(tmp, "tidemq")
	build := exec.Command("go", "build", "-o", tidemqBin, "./cmd/tidemq")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/tidemq: %v\n%s", err, out)
		return 1
	}

	// cli_binary_format only matters to AWS CLI v2: it makes blobs given on
	// the command line raw bytes, as CLI v1 always treats them.
	awsConfigFile = filepath.Join(tmp, "aws-config")
	awsCredentialsFile = filepath.Join(tmp, "aws-credentials")
	if err := os.WriteFile(awsConfigFile, []byte("[default]\ncli_binary_format = raw-in-base64-out\n"), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if err := os.WriteFile(awsCredentialsFile, nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return m.Run()
}

// moduleRoot is the directory of the go.mod this package belongs to.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err == nil {
		if gomod := strings.TrimSpace(string(out)); gomod != "" && gomod != os.DevNull {
			return filepath.Dir(gomod), nil
		}
	}
	abs, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
		return "", err
	}
	return abs, nil
}

// requireTool skips the test when a client tool is missing, except on CI,
// which must have it.
func requireTool(t *testing.T, what string, check func() error) {
	t.Helper()
	if err := check(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required on CI (.ci/run installs it): %v", what, err)
		}
		t.Skipf("%s not available: %v", what, err)
	}
}

// ---------------------------------------------------------------------------
// The server process

// server is one running `tidemq serve`.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	dir    string // its working directory, a fresh temporary one
	addr   string // host:port it listens on
	url    string // http://addr
	logs   *logWriter
	stdout *logWriter
	exited chan struct{}
	err    error // from Wait, once exited is closed

	stopOnce sync.Once
}

// logWriter collects a process's stderr and reports the address from the
// "tidemq listening" line, in either log format.
type logWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	addr    chan string
	found   bool
}

var (
	listenText = regexp.MustCompile(`msg="tidemq listening".*?\baddr=(\S+)`)
	listenJSON = regexp.MustCompile(`"msg":"tidemq listening".*?"addr":"([^"]+)"`)
)

func newLogWriter() *logWriter { return &logWriter{addr: make(chan string, 1)} }

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if w.found {
			continue
		}
		for _, re := range []*regexp.Regexp{listenText, listenJSON} {
			if m := re.FindStringSubmatch(line); m != nil {
				w.found = true
				w.addr <- m[1]
				break
			}
		}
	}
	return len(p), nil
}

func (w *logWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startServer runs `tidemq serve --listen 127.0.0.1:0` with the given extra
// flags, in memory unless they name a --data-dir, and waits for /health.
func startServer(t *testing.T, flags ...string) *server {
	t.Helper()
	args := []string{"serve", "--listen", "127.0.0.1:0"}
	durable := false
	for _, f := range flags {
		if f == "--data-dir" || strings.HasPrefix(f, "--data-dir=") || f == "--in-memory" {
			durable = true
		}
	}
	if !durable {
		args = append(args, "--in-memory")
	}
	return launch(t, append(args, flags...), nil)
}

// launch runs the binary with exactly these arguments and extra environment
// (on top of ours minus every TIDEMQ_ variable), in a scratch working
// directory, and waits until it listens and /health answers.
func launch(t *testing.T, args, env []string) *server {
	t.Helper()
	s := launchNoWait(t, args, env)
	s.waitHealthy()
	return s
}

// launchNoWait is launch without the wait for /health: it returns once the
// server has logged its address (s.url is http://ADDR).
func launchNoWait(t *testing.T, args, env []string) *server {
	t.Helper()
	return launchVia(t, nil, args, env)
}

// launchVia is launchNoWait with the binary run by a wrapper command
// (prefix, e.g. ip netns exec NAME), which must exec it in its place.
func launchVia(t *testing.T, prefix, args, env []string) *server {
	t.Helper()
	s := &server{t: t, logs: newLogWriter(), stdout: newLogWriter(), exited: make(chan struct{})}
	s.cmd = exec.Command(tidemqBin, args...)
	if len(prefix) > 0 {
		s.cmd = exec.Command(prefix[0], append(append(prefix[1:len(prefix):len(prefix)], tidemqBin), args...)...)
	}
	s.dir = t.TempDir() // the default --data-dir is relative
	s.cmd.Dir = s.dir
	s.cmd.Env = append(serverEnv(), env...)
	s.cmd.Stderr = s.logs
	s.cmd.Stdout = s.stdout
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start tidemq: %v", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("server %s logs:\n%s", strings.Join(args, " "), s.logs)
		}
	})

	select {
	case s.addr = <-s.logs.addr:
	case <-s.exited:
		t.Fatalf("tidemq %s exited before listening (%v); stderr:\n%s", strings.Join(args, " "), s.err, s.logs)
	case <-time.After(startTimeout):
		t.Fatalf("tidemq %s did not log its address within %v; stderr:\n%s", strings.Join(args, " "), startTimeout, s.logs)
	}
	s.url = "http://" + s.addr
	return s
}

func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TIDEMQ_") {
			env = append(env, kv)
		}
	}
	return env
}

func (s *server) waitHealthy() {
	s.t.Helper()
	deadline := time.Now().Add(startTimeout)
	var last error
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.url + "/health")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// Under --auth, an unsigned probe is refused, which shows the
			// server is up: the tests that need more sign their calls.
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusForbidden && strings.Contains(string(body), "MissingAuthenticationToken") {
				return
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		last = err
		select {
		case <-s.exited:
			s.t.Fatalf("tidemq exited while waiting for /health (%v); stderr:\n%s", s.err, s.logs)
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.t.Fatalf("GET /health on %s not OK within %v: %v", s.url, startTimeout, last)
}

// stop sends SIGTERM and waits for a clean exit, failing the test if the
// process takes longer than stopTimeout or exits non-zero. It returns how
// long the exit took. Only the first stop or stopWith does anything.
func (s *server) stop() time.Duration { return s.stopWith(syscall.SIGTERM) }

// stopWith is stop with another signal.
func (s *server) stopWith(sig os.Signal) time.Duration {
	var took time.Duration
	s.stopOnce.Do(func() {
		start := time.Now()
		select {
		case <-s.exited:
			s.t.Errorf("tidemq exited before it was stopped: %v", s.err)
			return
		default:
		}
		if err := s.cmd.Process.Signal(sig); err != nil {
			s.t.Errorf("signal %v: %v", sig, err)
		}
		select {
		case <-s.exited:
			took = time.Since(start)
			if s.err != nil {
				s.t.Errorf("tidemq exited with %v after %v", s.err, sig)
			}
		case <-time.After(stopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.exited
			s.t.Errorf("tidemq did not exit within %v of %v", stopTimeout, sig)
			took = stopTimeout
		}
	})
	return took
}

// runTidemq runs the binary to completion (for --help and bad flags) in a
// scratch directory, killing it after a timeout: a command that should have
// refused to start but serves instead is reported, not waited for.
func runTidemq(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tidemqBin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(serverEnv(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("tidemq %s still running after %v (it should have exited); stderr:\n%s", strings.Join(args, " "), cliTimeout, e.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("run tidemq %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), code
}

// ---------------------------------------------------------------------------
// A plain AWS JSON 1.0 client, for tests where the client is not the point.

var httpClient = &http.Client{Timeout: 45 * time.Second}

// call posts one unsigned AWS JSON 1.0 request and returns the status and
// the decoded body.
func (s *server) call(t *testing.T, action string, in any) (int, map[string]any) {
	t.Helper()
	status, out, err := s.tryCall(action, in)
	if err != nil {
		t.Fatalf("%s: %v", action, err)
	}
	return status, out
}

func (s *server) tryCall(action string, in any) (int, map[string]any, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(http.MethodPost, s.url+"/", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("status %s, body %q is not a JSON object: %v", resp.Status, raw, err)
	}
	return resp.StatusCode, out, nil
}

// mustCall is call that fails the test unless the answer is 200.
func (s *server) mustCall(t *testing.T, action string, in any) map[string]any {
	t.Helper()
	status, out := s.call(t, action, in)
	if status != http.StatusOK {
		t.Fatalf("%s: status %d, %v", action, status, out)
	}
	return out
}

// messages is the Messages list of a ReceiveMessage answer.
func messages(out map[string]any) []map[string]any {
	list, _ := out["Messages"].([]any)
	var ms []map[string]any
	for _, m := range list {
		if mm, ok := m.(map[string]any); ok {
			ms = append(ms, mm)
		}
	}
	return ms
}

// str digs a string out of nested JSON maps.
func str(v any, path ...string) string {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

// ---------------------------------------------------------------------------
// Client tools: the AWS CLI and python3 with boto3

// clientEnv is the environment for aws and python3: ours without any AWS_
// variable, plus dummy keys, isolated config files and no retries, so that
// errors surface at once.
func clientEnv(akid, secret string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"AWS_ACCESS_KEY_ID="+akid,
		"AWS_SECRET_ACCESS_KEY="+secret,
		"AWS_CONFIG_FILE="+awsConfigFile,
		"AWS_SHARED_CREDENTIALS_FILE="+awsCredentialsFile,
		"AWS_MAX_ATTEMPTS=1",
		"AWS_RETRY_MODE=standard",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=",
	)
}

// toolResult is the outcome of one aws or python3 run.
type toolResult struct {
	cmd    string
	stdout string
	stderr string
	code   int
	err    error // the tool could not be run, or timed out
}

func (r toolResult) String() string {
	return fmt.Sprintf("%s\nexit %d\nstdout:\n%s\nstderr:\n%s", r.cmd, r.code, r.stdout, r.stderr)
}

// execTool runs a tool to completion; safe to call from any goroutine.
func execTool(env []string, name string, args ...string) toolResult {
	return execToolWithin(toolTimeout, env, name, args...)
}

// execToolWithin is execTool with its own time limit.
func execToolWithin(limit time.Duration, env []string, name string, args ...string) toolResult {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := toolResult{cmd: name + " " + strings.Join(args, " "), stdout: o.String(), stderr: e.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.err = fmt.Errorf("timed out after %v\n%s", limit, r)
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		r.err = err
	}
	return r
}

// runTool is execTool that fails the test when the tool could not run.
func runTool(t *testing.T, env []string, name string, args ...string) toolResult {
	t.Helper()
	r := execTool(env, name, args...)
	if r.err != nil {
		t.Fatalf("%s: %v", r.cmd, r.err)
	}
	return r
}

var (
	awsOnce    sync.Once
	awsVersion string
	awsErr     error
)

// requireAWS skips (or, on CI, fails) without the AWS CLI.
func requireAWS(t *testing.T) {
	t.Helper()
	requireTool(t, "the AWS CLI (aws)", func() error {
		awsOnce.Do(func() {
			if _, awsErr = exec.LookPath("aws"); awsErr != nil {
				return
			}
			out, err := exec.Command("aws", "--version").CombinedOutput()
			if err != nil {
				awsErr = fmt.Errorf("aws --version: %v: %s", err, out)
				return
			}
			awsVersion = strings.TrimSpace(string(out))
		})
		return awsErr
	})
}

// awsServiceErrorExit is the exit code of the AWS CLI when the service
// answers with an error: 255 in v1 (every failure), 254 in v2.
func awsServiceErrorExit() int {
	if strings.HasPrefix(awsVersion, "aws-cli/1.") {
		return 255
	}
	return 254
}

// awsCLI runs `aws sqs ...` against one server.
type awsCLI struct {
	endpoint     string
	akid, secret string
}

func newCLI(t *testing.T, s *server) *awsCLI {
	t.Helper()
	requireAWS(t)
	return &awsCLI{endpoint: s.url, akid: "AKIDE2ETEST", secret: "e2e-secret"}
}

func (c *awsCLI) withKeys(akid, secret string) *awsCLI {
	return &awsCLI{endpoint: c.endpoint, akid: akid, secret: secret}
}

// run runs `aws sqs <args> --endpoint-url ... --region us-east-1 --output json`.
func (c *awsCLI) run(t *testing.T, args ...string) toolResult {
	t.Helper()
	full := append([]string{"sqs"}, args...)
	full = append(full, "--endpoint-url", c.endpoint, "--region", "us-east-1", "--output", "json")
	return runTool(t, clientEnv(c.akid, c.secret), "aws", full...)
}

// ok runs the command, fails the test unless it exits 0, and decodes its
// JSON output into out (when out is not nil).
func (c *awsCLI) ok(t *testing.T, out any, args ...string) {
	t.Helper()
	r := c.run(t, args...)
	if r.code != 0 {
		t.Fatalf("want success:\n%s", r)
	}
	if out == nil {
		return
	}
	// Decode into a zero value: json.Unmarshal merges into existing maps.
	reflect.ValueOf(out).Elem().SetZero()
	raw := strings.TrimSpace(r.stdout)
	if raw == "" {
		raw = "{}"
	}
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		t.Fatalf("output is not the expected JSON (%v):\n%s", err, r)
	}
}

// fails runs the command and checks that it fails as a service error with
// this error code shown on stderr (and the message fragment, if not empty).
func (c *awsCLI) fails(t *testing.T, code, message string, args ...string) toolResult {
	t.Helper()
	r := c.run(t, args...)
	if r.code != awsServiceErrorExit() {
		t.Errorf("want exit code %d (a service error) with %s, got:\n%s", awsServiceErrorExit(), code, r)
		return r
	}
	if !strings.Contains(r.stderr, "("+code+")") {
		t.Errorf("want error code (%s) on stderr, got:\n%s", code, r)
	}
	if message != "" && !strings.Contains(r.stderr, message) {
		t.Errorf("want %q on stderr, got:\n%s", message, r)
	}
	return r
}

var (
	pyOnce sync.Once
	pyErr  error
)

// requireBoto3 skips (or, on CI, fails) without python3 and boto3.
func requireBoto3(t *testing.T) {
	t.Helper()
	requireTool(t, "python3 with boto3", func() error {
		pyOnce.Do(func() {
			out, err := exec.Command("python3", "-c", "import boto3").CombinedOutput()
			if err != nil {
				pyErr = fmt.Errorf("python3 -c 'import boto3': %v: %s", err, out)
			}
		})
		return pyErr
	})
}

// ---------------------------------------------------------------------------
// Shortcuts over call for set-up and checks around the client under test.

func (s *server) createQueue(t *testing.T, name string, attrs map[string]string) string {
	t.Helper()
	in := map[string]any{"QueueName": name}
	if attrs != nil {
		in["Attributes"] = attrs
	}
	url := str(s.mustCall(t, "CreateQueue", in), "QueueUrl")
	if url == "" {
		t.Fatalf("CreateQueue %s: no QueueUrl", name)
	}
	return url
}

func (s *server) queueAttrs(t *testing.T, url string, names ...string) map[string]string {
	t.Helper()
	out := s.mustCall(t, "GetQueueAttributes", map[string]any{"QueueUrl": url, "AttributeNames": names})
	attrs := map[string]string{}
	if m, ok := out["Attributes"].(map[string]any); ok {
		for k, v := range m {
			attrs[k], _ = v.(string)
		}
	}
	return attrs
}

// depth is the seed's three counters: visible, delayed, not visible.
func (s *server) depth(t *testing.T, url string) [3]string {
	t.Helper()
	a := s.queueAttrs(t, url, "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed", "ApproximateNumberOfMessagesNotVisible")
	return [3]string{a["ApproximateNumberOfMessages"], a["ApproximateNumberOfMessagesDelayed"], a["ApproximateNumberOfMessagesNotVisible"]}
}

func (s *server) wantDepth(t *testing.T, url string, visible, delayed, notVisible int) {
	t.Helper()
	want := [3]string{fmt.Sprint(visible), fmt.Sprint(delayed), fmt.Sprint(notVisible)}
	if got := s.depth(t, url); got != want {
		t.Errorf("%s: visible/delayed/not visible = %v, want %v", url, got, want)
	}
}

func (s *server) send(t *testing.T, url, body string) string {
	t.Helper()
	return str(s.mustCall(t, "SendMessage", map[string]any{"QueueUrl": url, "MessageBody": body}), "MessageId")
}

// receive is one ReceiveMessage with these extra parameters.
func (s *server) receive(t *testing.T, url string, params map[string]any) []map[string]any {
	t.Helper()
	in := map[string]any{"QueueUrl": url}
	for k, v := range params {
		in[k] = v
	}
	return messages(s.mustCall(t, "ReceiveMessage", in))
}
