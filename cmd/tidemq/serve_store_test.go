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

// A password given as a query parameter (libpq's password= and
// sslpassword=, which pgx reads too) is hidden as the userinfo's is, and a
// URL that does not parse is not quoted at all: the start-up log line and
// the errors of --store show what redactDSN returns.
func TestRedactDSNHidesQueryPasswords(t *testing.T) {
	for _, dsn := range []string{
		"postgres://tidemq@db/tidemq?sslmode=require&password=hunter2",
		"postgres://tidemq@db/tidemq?PASSWORD=hunter2",
		"postgres://tidemq@db/tidemq?sslpassword=hunter2&sslmode=verify-full",
		"postgres://tidemq:hunter2@db:bad-port/tidemq",
		"postgres://tidemq:hunt%zzer2@db/tidemq",
		"mysql://root:hunter2@db:x/x",
	} {
		if got := redactDSN(dsn); strings.Contains(got, "hunter2") || strings.Contains(got, "hunt") {
			t.Errorf("redactDSN(%q) = %q", dsn, got)
		}
	}
	if got := redactDSN("postgres://tidemq@db/tidemq?sslmode=require&password=hunter2"); !strings.Contains(got, "sslmode=require") {
		t.Errorf("redactDSN dropped what is not secret: %q", got)
	}
}

// checkStore's error for a --store URL that does not parse does not quote
// its password (url.Parse's error quotes the whole URL).
func TestCheckStoreErrorHidesThePassword(t *testing.T) {
	for _, dsn := range []string{"postgres://u:hunter2@db:bad-port/x", "postgres://u:hunter2%zz@db/x", "mysql://u:hunter2@db:x/x"} {
		err := (&serveOptions{store: dsn}).checkStore()
		if err == nil {
			t.Errorf("--store %q accepted", dsn)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("--store %q: the error quotes the password: %v", dsn, err)
		}
	}
}

// --store in libpq's keyword/value form is refused without its password.
func TestCheckStoreKeywordValueHidesThePassword(t *testing.T) {
	for _, dsn := range []string{"host=db user=u password=hunter2 dbname=x", "host=db password = 'hunter2 x\\'y' sslmode=require",
		"PASSWORD=hunter2", "host=db sslpassword=hunter2"} {
		err := (&serveOptions{store: dsn}).checkStore()
		if err == nil {
			t.Errorf("--store %q accepted", dsn)
		} else if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "x\\'y") {
			t.Errorf("--store %q: the error quotes the password: %v", dsn, err)
		}
	}
	if got := redactDSN("host=db password=hunter2 dbname=x"); got != "host=db password=xxxxx dbname=x" {
		t.Errorf("redactDSN = %q", got)
	}
}

// A password given on the command line is named for a warning; the same
// through $TIDEMQ_STORE is not.
func TestSecretsOnCommandLine(t *testing.T) {
	cmd := newServeCommand()
	if err := cmd.Flags().Parse([]string{"--store", "postgres://u:hunter2@db/x", "--credentials", "AKID:SECRET"}); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{store: cmd.Flags().Lookup("store").Value.String(), credentials: "AKID:SECRET"}
	if got := secretsOnCommandLine(cmd.Flags(), o); strings.Join(got, ",") != "store,credentials" {
		t.Errorf("on the command line: %v, want store,credentials", got)
	}
	t.Setenv("TIDEMQ_STORE", "postgres://u:hunter2@db/x")
	cmd = newServeCommand()
	if err := setFromEnv(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	o = &serveOptions{store: cmd.Flags().Lookup("store").Value.String()}
	if got := secretsOnCommandLine(cmd.Flags(), o); len(got) != 0 {
		t.Errorf("from the environment: %v, want none", got)
	}
	cmd = newServeCommand()
	_ = cmd.Flags().Parse([]string{"--store", "postgres://u@db/x"})
	if got := secretsOnCommandLine(cmd.Flags(), &serveOptions{store: "postgres://u@db/x"}); len(got) != 0 {
		t.Errorf("no password: %v", got)
	}
}
