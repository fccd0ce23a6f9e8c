package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBenchAgainstServe is CI's smoke run of `tidemq bench` as a user runs
// it: the binary against `tidemq serve` on a durable store, every scenario
// small, with the raw client (signed and unsigned) and the SDK client. It
// checks that every message is accounted for, not how fast.
func TestBenchAgainstServe(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--data-dir", filepath.Join(t.TempDir(), "data"))
	every := []string{"send", "send-batch", "receive", "receive-batch", "fifo", "longpoll", "mixed", "depth"}
	for _, run := range []struct {
		client    []string
		scenarios []string
		results   int
	}{
		{[]string{"--client", "raw"}, every, 9}, // depth runs once per --depths
		{[]string{"--client", "raw", "--unsigned"}, []string{"send", "receive-batch"}, 2},
		{[]string{"--client", "sdk"}, []string{"send-batch", "receive"}, 2},
	} {
		client := run.client
		args := append([]string{"bench", "--endpoint", s.url, "--json", "--clients", "4", "--count", "100",
			"--depths", "100,1000", "--rate", "100", "--duration", "1s"}, append(run.scenarios, client...)...)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, tidemqBin, args...)
		cmd.Env = withoutCredentials(serverEnv())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("tidemq %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, &stdout, &stderr)
		}
		var scenarios []string
		sc := bufio.NewScanner(&stdout)
		for sc.Scan() {
			var r struct {
				Scenario                 string
				Messages                 int64
				Errors, Lost, Duplicates int64
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%v: output line %q: %v", client, sc.Text(), err)
			}
			if r.Messages == 0 || r.Errors+r.Lost+r.Duplicates != 0 {
				t.Errorf("%v: %s", client, sc.Text())
			}
			scenarios = append(scenarios, r.Scenario)
		}
		if len(scenarios) != run.results {
			t.Errorf("%v: %d results (%v), want one per scenario and depth", client, len(scenarios), scenarios)
		}
		// Without credentials the setup calls sign with placeholders: worth
		// a note, unless the run said the server takes unsigned requests.
		noted := strings.Contains(stderr.String(), "no AWS credentials found")
		if unsigned := slices.Contains(client, "--unsigned"); noted == unsigned {
			t.Errorf("%v: the note on missing credentials printed: %v, want %v\nstderr:\n%s", client, noted, !unsigned, &stderr)
		}
	}
	// A run that cannot reach its endpoint fails with a message, not a hang.
	cmd := exec.Command(tidemqBin, "bench", "--endpoint", "http://127.0.0.1:1", "--count", "10", "send")
	cmd.Env = serverEnv()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "connect") {
		t.Errorf("bench against a closed port: %v\n%s", err, out)
	}
	// An unknown client is a usage error (exit status 2).
	cmd = exec.Command(tidemqBin, "bench", "--client", "curl", "send")
	cmd.Env = serverEnv()
	if out, err := cmd.CombinedOutput(); exitCode(err) != 2 || !strings.Contains(string(out), "--client must be raw or sdk") {
		t.Errorf("bench --client curl: %v\n%s", err, out)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestBenchSignsForAuth: the raw client's SigV4 signatures pass a tidemq
// that checks them; unsigned, or with the wrong secret, the run fails.
func TestBenchSignsForAuth(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--auth", "--credentials", "AKIDBENCH:b3nch/secret")
	run := func(secret string, extra ...string) (string, error) {
		args := append([]string{"bench", "--endpoint", s.url, "--clients", "2", "--count", "50", "send", "receive-batch"}, extra...)
		cmd := exec.Command(tidemqBin, args...)
		cmd.Env = append(serverEnv(), "AWS_ACCESS_KEY_ID=AKIDBENCH", "AWS_SECRET_ACCESS_KEY="+secret)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("b3nch/secret"); err != nil {
		t.Fatalf("signed run against --auth: %v\n%s", err, out)
	}
	if out, err := run("wrong"); err == nil || !strings.Contains(out, "SignatureDoesNotMatch") {
		t.Errorf("wrong secret: %v\n%s", err, out)
	}
	if out, err := run("b3nch/secret", "--unsigned"); err == nil || !strings.Contains(out, "MissingAuthenticationToken") {
		t.Errorf("unsigned against --auth: %v\n%s", err, out)
	}
}

// withoutCredentials is env without any AWS credentials: no keys, and no
// shared files to read them from.
func withoutCredentials(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "AWS_") {
			out = append(out, kv)
		}
	}
	return append(out, "AWS_SHARED_CREDENTIALS_FILE=/nonexistent", "AWS_CONFIG_FILE=/nonexistent", "AWS_EC2_METADATA_DISABLED=true")
}
