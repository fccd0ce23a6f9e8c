package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTopInTmux runs `tidemq serve` and `tidemq top` against it in a real
// terminal (tmux), presses s, / and q, and checks the screen and the exit
// status. It is skipped when tmux is not installed (apt-get install tmux)
// and with -short.
func TestTopInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a terminal")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed (apt-get install tmux)")
	}
	bin := buildBinary(t)
	endpoint := startServer(t, bin, "--in-memory")
	sqsCall(t, endpoint, "CreateQueue", `{"QueueName":"orders-dlq"}`)
	sqsCall(t, endpoint, "CreateQueue", `{"QueueName":"orders","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:orders-dlq\",\"maxReceiveCount\":\"3\"}"}}`)
	sqsCall(t, endpoint, "CreateQueue", `{"QueueName":"zebra"}`)
	for range 3 {
		sqsCall(t, endpoint, "SendMessage", `{"QueueUrl":"`+endpoint+`/000000000000/zebra","MessageBody":"x"}`)
	}
	sqsCall(t, endpoint, "SendMessage", `{"QueueUrl":"`+endpoint+`/000000000000/orders","MessageBody":"x"}`)

	socket := fmt.Sprintf("tidemq-top-test-%d", os.Getpid())
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { exec.Command(tmux, "-L", socket, "kill-server").Run() })
	shell := fmt.Sprintf("TERM=xterm-256color %s top --endpoint %s; echo \"top exited: $?\"; sleep 60", bin, endpoint)
	tm("new-session", "-d", "-s", "top", "-x", "160", "-y", "20", "sh", "-c", shell)
	screen := func() string { return tm("capture-pane", "-p", "-t", "top") }
	expect := func(what string, ok func(string) bool) {
		t.Helper()
		var last string
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if last = screen(); ok(last) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: screen:\n%s", what, last)
	}
	expect("first frame", func(s string) bool {
		return strings.Contains(s, "sort: name") && strings.Contains(s, "zebra") && strings.Contains(s, "orders-dlq")
	})
	// Sorted by name, orders comes before zebra; sorted by depth, zebra (3) first.
	if s := screen(); strings.Index(s, "orders ") > strings.Index(s, "zebra") {
		t.Errorf("not sorted by name:\n%s", s)
	}
	tm("send-keys", "-t", "top", "s")
	expect("sort by depth", func(s string) bool {
		return strings.Contains(s, "sort: depth") && strings.Index(s, "zebra") < strings.Index(s, "orders ")
	})
	tm("send-keys", "-t", "top", "/", "d", "l", "q", "Enter")
	expect("filter", func(s string) bool {
		return strings.Contains(s, "filter: dlq") && strings.Contains(s, "1 queues") && !strings.Contains(s, "zebra")
	})
	tm("send-keys", "-t", "top", "q")
	expect("clean exit", func(s string) bool { return strings.Contains(s, "top exited: 0") })
}

// buildBinary builds the tidemq binary into the test's temporary directory
// (the build cache makes the second build of a run cheap).
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tidemq")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// startServer runs tidemq serve with args on a free port until the test
// ends and returns its URL.
func startServer(t *testing.T, bin string, args ...string) string {
	t.Helper()
	addr := freeAddr(t)
	srv := exec.Command(bin, append([]string{"serve", "--listen", addr, "--log-level", "error"}, args...)...)
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	endpoint := "http://" + addr
	waitFor(t, "server", func() bool {
		resp, err := http.Get(endpoint + "/health")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	return endpoint
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for the %s", what)
}

func sqsCall(t *testing.T, endpoint, action, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s", action, resp.Status)
	}
}
