package lambdart_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemq/tidemq/lambdart"
)

// thief is a Python program that takes the next invocation from the
// Runtime API at argv[1] and answers it as processed: what any process of
// the machine could do to a Runtime API that answers everyone.
const thief = `
import sys, urllib.request
api = "http://" + sys.argv[1] + "/2018-06-01/runtime/invocation/"
try:
    with urllib.request.urlopen(api + "next", timeout=5) as r:
        rid = r.headers["Lambda-Runtime-Aws-Request-Id"]
        body = r.read().decode()
    req = urllib.request.Request(api + rid + "/response", data=b'{"stolen":true}', method="POST")
    urllib.request.urlopen(req, timeout=5).read()
    print("STOLE " + body)
except Exception as e:
    print("REFUSED " + repr(e))
`

// A process of another user cannot take a function's invocation from its
// Runtime API, nor answer it: the API answers only the server's user.
func TestRuntimeAPIRefusesOtherUsers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a process as another user")
	}
	py := "/usr/bin/python3" // the system's: another user may not run root's (pyenv's)
	if _, err := os.Stat(py); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	// A runtime that tells its Runtime API's address and then never asks
	// for an invocation: the thief is the first to ask.
	boot := "#!/bin/sh\necho \"$AWS_LAMBDA_RUNTIME_API\" > " + addrFile + ".tmp && mv " + addrFile + ".tmp " + addrFile + "\nexec sleep 30\n"
	if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte(boot), 0o755); err != nil {
		t.Fatal(err)
	}
	pool, err := lambdart.NewPool(lambdart.Function{Name: "f", Runtime: "provided.al2023", CodeDir: dir, Timeout: 4 * time.Second}, lambdart.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	type result struct {
		resp []byte
		err  error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	go func() {
		resp, err := pool.Invoke(ctx, []byte(`{"Records":[{"body":"card number"}]}`))
		done <- result{resp, err}
	}()
	var addr string
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil {
			addr = strings.TrimSpace(string(b))
			break
		}
	}
	if addr == "" {
		t.Fatal("the runtime did not start")
	}
	cmd := exec.Command(py, "-c", thief, addr)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("thief: %v: %s", err, out)
	}
	if strings.Contains(string(out), "STOLE") {
		t.Errorf("a process of another user took the invocation: %s", out)
	}
	r := <-done
	if strings.Contains(string(r.resp), "stolen") {
		t.Errorf("the invocation returned the other user's answer: %s", r.resp)
	}
	if r.err == nil {
		t.Errorf("the invocation succeeded without its runtime: %s", r.resp)
	}
}

// An invocation whose context has no deadline ends at the function's
// Timeout, as Invoke promises: a runtime that never answers is killed.
func TestInvokeWithoutDeadlineTimesOut(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	pool, err := lambdart.NewPool(lambdart.Function{Name: "f", Runtime: "provided.al2023", CodeDir: dir, Timeout: 300 * time.Millisecond}, lambdart.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	done := make(chan error, 1)
	go func() {
		_, err := pool.Invoke(context.Background(), []byte(`{}`))
		done <- err
	}()
	select {
	case err := <-done:
		var te *lambdart.TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("Invoke = %v, want a *TimeoutError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Invoke without a deadline did not end at the function's Timeout")
	}
}

// A Python function whose response is over Lambda's 6 MB gets
// Function.ResponseSizeTooLarge, and its process, which the Runtime API
// answered 413, goes on serving (the bootstrap used to die of the 413,
// so the next batch paid a cold start).
func TestPythonLargeResponseKeepsTheProcess(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	dir := t.TempDir()
	code := "import os\n\ndef handler(event, context):\n    if event['Records'][0]['body'] == 'big':\n        return 'x' * (7 << 20)\n    return {'pid': os.getpid()}\n"
	if err := os.WriteFile(filepath.Join(dir, "big.py"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	pool, err := lambdart.NewPool(lambdart.Function{Name: "f", Runtime: "python3.12", Handler: "big.handler", CodeDir: dir, Timeout: 20 * time.Second}, lambdart.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	pid := func() string {
		t.Helper()
		resp, err := pool.Invoke(context.Background(), []byte(`{"Records":[{"body":"pid"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return string(resp)
	}
	before := pid()
	_, err = pool.Invoke(context.Background(), []byte(`{"Records":[{"body":"big"}]}`))
	var fe *lambdart.FunctionError
	if !errors.As(err, &fe) || fe.Type != "Function.ResponseSizeTooLarge" {
		t.Fatalf("a 7 MB response: %v, want Function.ResponseSizeTooLarge", err)
	}
	if after := pid(); after != before {
		t.Errorf("the process was replaced after a response over 6 MB: %s, then %s", before, after)
	}
}
