package ratelog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestRepeatedErrorsBounded(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	log := slog.New(New(slog.NewTextHandler(&buf, nil), Options{Interval: 10 * time.Second, Burst: 2, Now: func() time.Time { return now }}))
	for i := 0; i < 1000; i++ {
		log.Error("postgres: request failed", "i", i)
		log.With("k", "v").Error("postgres: request failed", "i", i) // the same limit
	}
	log.Error("another failure")
	log.Info("info is never limited")
	log.Info("info is never limited")
	log.Info("info is never limited")
	if n := strings.Count(buf.String(), "postgres: request failed"); n != 2 {
		t.Errorf("%d of 2,000 repeated errors logged in one interval, want 2:\n%s", n, buf.String())
	}
	if strings.Count(buf.String(), "another failure") != 1 || strings.Count(buf.String(), "info is never limited") != 3 {
		t.Errorf("other records limited:\n%s", buf.String())
	}
	now = now.Add(10 * time.Second)
	buf.Reset()
	log.Error("postgres: request failed")
	if !strings.Contains(buf.String(), "suppressed=1998") {
		t.Errorf("the next interval's first record does not count what was left out: %s", buf.String())
	}
}
