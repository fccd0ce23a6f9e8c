//go:build unix

package trigger

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command's background children end with it (they ran on, holding
// nothing but the machine's resources).
func TestCommandChildrenEndWithIt(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	inv := &commandInvoker{t: Target{Command: []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; echo '{}'"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out := inv.invoke(ctx, []byte(`{}`)); out.err != nil {
		t.Fatalf("invoke: %v", out.err)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	defer syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if _, err := os.Stat("/proc"); err != nil {
			t.Skip("no /proc")
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %d outlived it", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
