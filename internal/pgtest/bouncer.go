package pgtest

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bouncer starts a PgBouncer in front of the database of dsn (a URL, as
// Database returns), pooling by mode ("session" or "transaction"), stops
// it when t ends, and returns a DSN that reaches the database through it.
// It ignores the startup parameters a node sets (jit,
// idle_in_transaction_session_timeout), as the README tells an operator
// to configure it. It skips t when pgbouncer is not installed (.ci/run
// installs it when it can), running it as the postgres user when root
// (PgBouncer refuses to run as root).
func Bouncer(t testing.TB, dsn, mode string) string {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/pgbouncer"); err != nil {
			t.Skip("pgbouncer is not installed")
		}
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("pgtest.Bouncer needs a URL DSN (postgres://...), not %q", dsn)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	db := strings.TrimPrefix(u.Path, "/")
	dir, err := os.MkdirTemp("", "tidemq-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	listen, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`[databases]
%s = host=%s port=%s dbname=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = %s
max_client_conn = 500
default_pool_size = 100
ignore_startup_parameters = extra_float_digits,jit,idle_in_transaction_session_timeout
logfile = %s
`, db, host, port, db, listen, filepath.Join(dir, "users.txt"), mode, filepath.Join(dir, "log"))
	if err := os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The clients are trusted; the password is what PgBouncer logs in to
	// the server with.
	password, _ := u.User.Password()
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(`"`+u.User.Username()+`" "`+password+`"`+"\n"), 0o644); err != nil { // in dir, which is 0700
		t.Fatal(err)
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cred, err := owner()
	if err != nil {
		t.Skip(err)
	}
	if err := giveTo(dir, cred); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("pgbouncer: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	b := *u
	b.Host = fmt.Sprintf("127.0.0.1:%d", listen)
	out := b.String()
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if err = execOn(out, "SELECT 1"); err == nil {
			return out
		}
		if time.Since(start) > 10*time.Second {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("pgbouncer did not answer: %v\n%s", err, log)
		}
	}
}
