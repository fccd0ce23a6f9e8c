package main

import (
	"strings"
	"testing"
)

func TestCheckQueueStores(t *testing.T) {
	for _, c := range []struct {
		store  string
		queues []string
		want   string // "" for no error, else a part of the message
	}{
		{"postgres://u@a/db", []string{"postgres://u@b/db"}, ""},
		{"postgres://u@a/db", []string{"postgres://u@b/db postgres://u@c/db"}, ""},
		{"postgres://u@a/db", []string{"postgres://u@b/db", "postgres://u@c/db"}, ""},
		{"pebble", []string{"postgres://u@b/db"}, "give --store a postgres:// URL"},
		{"postgres://u@a/db", []string{"postgres://u@a/db"}, "given twice"},
		{"postgres://u@a/db", []string{"postgres://u@b/db", "postgres://u@b/db"}, "given twice"},
		{"postgres://u@a/db", []string{"mysql://u:hunter2@b/db"}, "must be a postgres"},
	} {
		o := &serveOptions{store: c.store}
		o.cluster.queueStores = c.queues
		err := o.checkStore()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.queues, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %v: %v, want an error with %q", c.store, c.queues, err, c.want)
		case err != nil && strings.Contains(err.Error(), "hunter2"):
			t.Errorf("the error shows a password: %v", err)
		}
	}
}
