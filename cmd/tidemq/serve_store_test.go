package main

import (
	"strings"
	"testing"
)

func TestCheckStore(t *testing.T) {
	for _, c := range []struct {
		store    string
		inMemory bool
		want     string // "" for no error, else a part of the message
	}{
		{"pebble", false, ""},
		{"", false, ""},
		{"postgres://tidemq@db/tidemq", false, ""},
		{"postgresql://tidemq@db/tidemq?sslmode=require", false, ""},
		{"postgres://tidemq@db/tidemq", true, "pick one"},
		{"mysql://root:hunter2@db/x", false, "must be pebble"},
		{"postgres://u:secret@db/x", false, ""},
	} {
		err := (&serveOptions{store: c.store, inMemory: c.inMemory}).checkStore()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("--store %q: %v", c.store, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("--store %q (in memory %v): %v, want an error with %q", c.store, c.inMemory, err, c.want)
		}
	}
}

func TestRedactDSNHidesThePassword(t *testing.T) {
	got := redactDSN("postgres://tidemq:hunter2@db.internal:5432/tidemq?sslmode=require")
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "tidemq:xxxxx@db.internal:5432/tidemq") {
		t.Errorf("redactDSN = %q", got)
	}
	if got := redactDSN("postgres://tidemq@db/x"); got != "postgres://tidemq@db/x" {
		t.Errorf("redactDSN without a password = %q", got)
	}
}
