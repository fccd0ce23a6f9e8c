package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// JSON logs write durations as the text format does ("1.5s"), not as
// integer nanoseconds.
func TestJSONLogDurations(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("tick", "interval", 30*time.Second, "count", 3)
	if out := buf.String(); !strings.Contains(out, `"interval":"30s"`) || !strings.Contains(out, `"count":3`) {
		t.Errorf("log line: %s", out)
	}
	if _, err := newLogger(&buf, "info", "xml"); err == nil {
		t.Error("--log-format xml accepted")
	}
}
