package diskguard

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestLowCrossesTheMinimum(t *testing.T) {
	var logs bytes.Buffer
	g := New(t.TempDir(), 1000, slog.New(slog.NewTextHandler(&logs, nil)))
	free := uint64(5000)
	g.SetStatfs(func(string) (uint64, error) { return free, nil })
	g.Check()
	if g.Low() {
		t.Fatal("low with 5000 bytes free, minimum 1000")
	}
	free = 999
	g.Check()
	if !g.Low() || !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "free_bytes=999") {
		t.Fatalf("not low (or not logged) at 999 bytes free: %s", logs.String())
	}
	free = 1000
	g.Check()
	if g.Low() || !strings.Contains(logs.String(), "sends accepted again") {
		t.Fatalf("still low at the minimum: %s", logs.String())
	}
	// The real file system has some space.
	real := New(t.TempDir(), 1, nil)
	real.Check()
	if f, ok := real.Free(); !ok || f == 0 || real.Low() {
		t.Errorf("free space of a temp dir: %d %v low %v", f, ok, real.Low())
	}
}
