package lambdart

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq/internal/testlog"
)

// A 100 MB line is logged cut, saying how much was cut; output past the
// rate is dropped and counted in a warning.
func TestOutputLogBounded(t *testing.T) {
	logs := &testlog.Buffer{}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	o := &outputLog{log: slog.New(slog.NewTextHandler(logs, nil)), now: func() time.Time { return now }}
	big := bytes.Repeat([]byte("x"), 100<<20)
	for i := 0; i < len(big); i += 1 << 20 {
		o.Write(big[i : i+1<<20])
	}
	o.Write([]byte("\n"))
	if !strings.Contains(logs.String(), "truncated_bytes=104792064") {
		t.Fatalf("a 100 MB line is not logged with what was cut: %.300s", logs.String())
	}
	if len(logs.String()) > 70<<10 {
		t.Errorf("a 100 MB line made %d bytes of log", len(logs.String()))
	}
	for i := 0; i < 3000; i++ {
		o.Write([]byte("line\n"))
	}
	if n := strings.Count(logs.String(), "msg=line"); n != maxLinesPerSecond-1 {
		t.Errorf("%d lines logged in one second, want %d", n, maxLinesPerSecond-1)
	}
	now = now.Add(time.Second)
	o.Write([]byte("after\n"))
	if !strings.Contains(logs.String(), "function output dropped") || !strings.Contains(logs.String(), "lines=2801") {
		t.Errorf("no warning with the count of dropped lines:\n%.2000s", logs.String()[len(logs.String())-2000:])
	}
	if !strings.Contains(logs.String(), "msg=after") {
		t.Error("the line after the drop is not logged")
	}
}
