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

// A --queue-store URL with a password on the command line is named, like
// --store's; from $TIDEMQ_QUEUE_STORE (several URLs, space-separated) it
// is not, and the list splits.
func TestQueueStoreSecretsAndVariable(t *testing.T) {
	cmd := newServeCommand()
	if err := cmd.Flags().Parse([]string{"--store", "postgres://u@a/x", "--queue-store", "postgres://u:hunter2@b/x"}); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{store: "postgres://u@a/x"}
	o.cluster.queueStores = []string{"postgres://u:hunter2@b/x"}
	if got := secretsOnCommandLine(cmd.Flags(), o); strings.Join(got, ",") != "queue-store" {
		t.Errorf("on the command line: %v, want queue-store", got)
	}
	t.Setenv("TIDEMQ_QUEUE_STORE", "postgres://u:hunter2@b/x postgres://u@c/x")
	cmd = newServeCommand()
	if err := setFromEnv(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	vals, err := cmd.Flags().GetStringArray("queue-store")
	if err != nil {
		t.Fatal(err)
	}
	o.cluster.queueStores = vals
	if got := secretsOnCommandLine(cmd.Flags(), o); len(got) != 0 {
		t.Errorf("from the environment: %v, want none", got)
	}
	if got := o.cluster.queueStoreList(); len(got) != 2 || got[1] != "postgres://u@c/x" {
		t.Errorf("the variable's list: %v", got)
	}
}
