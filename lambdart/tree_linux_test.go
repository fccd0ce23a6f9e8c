//go:build linux

package lambdart_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemq/tidemq/lambdart"
)

// A runtime's child that left its process group with setsid dies with the
// runtime (it outlived the kill of the group).
func TestSetsidGrandchildKilled(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("needs setsid")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	boot := "#!/bin/sh\nsetsid sh -c 'echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "; exec sleep 300' &\nexec sleep 60\n"
	if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte(boot), 0o755); err != nil {
		t.Fatal(err)
	}
	pool, err := lambdart.NewPool(lambdart.Function{Name: "f", Runtime: "provided.al2023", CodeDir: dir, Timeout: 2 * time.Second}, lambdart.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// The runtime never answers: the invocation times out and the
	// runtime is killed.
	_, err = pool.Invoke(context.Background(), []byte(`{}`))
	var te *lambdart.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Invoke = %v, want a timeout", err)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the grandchild did not start: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	pool.Close()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the setsid grandchild %d outlived its runtime", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] != 'Z'
}
