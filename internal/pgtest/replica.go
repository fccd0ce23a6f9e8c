package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Pair is a primary and a streaming standby in synchronous replication
// (synchronous_standby_names on the primary names the standby, and
// synchronous_commit is on): a commit is acknowledged only once the
// standby has its WAL, so whatever a client saw acknowledged survives the
// primary's loss. For failover tests: KillPrimary, then Promote.
type Pair struct {
	Primary, Standby *Server
	// DSN names both hosts with target_session_attrs=read-write (pgx's
	// multi-host syntax): a connection goes to whichever is the primary.
	DSN string
}

// StandbyName is the standby's application_name, which the primary's
// synchronous_standby_names waits for.
const StandbyName = "standby1"

// StartPair initialises a primary, copies it with pg_basebackup into a
// standby, starts both, and returns once the standby streams
// synchronously. It needs the same binaries as Start, and pg_basebackup.
func StartPair() (*Pair, error) {
	primary, err := Start()
	if err != nil {
		return nil, err
	}
	p := &Pair{Primary: primary}
	fail := func(err error) (*Pair, error) {
		p.Stop()
		return nil, err
	}
	pport := primary.port()
	// Synchronous replication: replaces Start's synchronous_commit = off.
	// fsync stays off: the tests kill processes, not the machine, so the
	// page cache survives them.
	if err := primary.appendConf("postgresql.conf", fmt.Sprintf("wal_level = replica\nmax_wal_senders = 5\nsynchronous_commit = on\n"+
		"synchronous_standby_names = '%s'\nwal_sender_timeout = 5s\n", StandbyName)); err != nil {
		return fail(err)
	}
	if err := primary.Halt(); err != nil {
		return fail(err)
	}
	if err := primary.Resume(); err != nil {
		return fail(err)
	}

	sdir, err := os.MkdirTemp("", "tidemq-pg-standby-")
	if err != nil {
		return fail(err)
	}
	standby := &Server{dir: sdir, bin: primary.bin, cred: primary.cred}
	p.Standby = standby
	if err := giveTo(sdir, primary.cred); err != nil {
		return fail(err)
	}
	if out, err := standby.run("pg_basebackup", "-D", filepath.Join(sdir, "data"), "-h", "127.0.0.1", "-p", strconv.Itoa(pport),
		"-U", "postgres", "-X", "stream", "-R", "--no-sync"); err != nil {
		return fail(fmt.Errorf("pg_basebackup: %v: %s", err, out))
	}
	// The standby's own port and socket directory; the primary's
	// synchronous_standby_names is not the standby's once promoted (no
	// standby is left to wait for: the HA manager's choice, see the
	// README), and it names itself to the primary. In
	// postgresql.auto.conf, read last: pg_basebackup -R wrote a
	// primary_conninfo without the application_name there.
	var sport int
	for attempt := 0; ; attempt++ {
		if sport, err = freePort(); err != nil {
			return fail(err)
		}
		if err := standby.appendConf("postgresql.auto.conf", fmt.Sprintf("port = %d\nunix_socket_directories = '%s'\nsynchronous_standby_names = ''\n"+
			"primary_conninfo = 'host=127.0.0.1 port=%d user=postgres application_name=%s'\nhot_standby = on\nwal_retrieve_retry_interval = 200ms\n",
			sport, sdir, pport, StandbyName)); err != nil {
			return fail(err)
		}
		err := standby.Resume()
		if err == nil {
			break
		}
		if attempt >= 2 { // the port may have been taken meanwhile: another
			return fail(err)
		}
	}
	standby.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", sport)
	p.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write", pport, sport)

	// Wait until the primary sees the standby as its synchronous one.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		state, err := syncState(ctx, primary.DSN)
		if err == nil && state == "sync" {
			return p, nil
		}
		if ctx.Err() != nil {
			log, _ := os.ReadFile(filepath.Join(sdir, "log"))
			return fail(fmt.Errorf("the standby is not synchronous after 60s (state %q, %v); its log:\n%s", state, err, log))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncState is the sync_state of the standby in the primary's
// pg_stat_replication ("" when it is not connected).
func syncState(ctx context.Context, dsn string) (string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var state string
	err = conn.QueryRow(ctx, `SELECT sync_state FROM pg_stat_replication WHERE application_name = $1`, StandbyName).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return state, err
}

// KillPrimary kills the primary's postmaster and every process it started
// with SIGKILL, as a crash of its machine would: no shutdown, no
// connection closed politely (the kernel resets them).
func (p *Pair) KillPrimary() error { return p.Primary.kill9() }

// Promote makes the standby the primary (pg_ctl promote, waiting until it
// accepts writes).
func (p *Pair) Promote() error {
	if out, err := p.Standby.run("pg_ctl", "-D", filepath.Join(p.Standby.dir, "data"), "-w", "-t", "60", "promote"); err != nil {
		return fmt.Errorf("pg_ctl promote: %v: %s", err, out)
	}
	return nil
}

// Stop stops both servers and removes their files.
func (p *Pair) Stop() {
	if p.Standby != nil {
		_ = p.Standby.Stop()
	}
	if p.Primary != nil {
		_ = p.Primary.kill9()
		_ = os.RemoveAll(p.Primary.dir)
	}
}

// port is the server's TCP port, read from its DSN.
func (s *Server) port() int {
	i := strings.LastIndex(s.DSN, ":")
	j := strings.Index(s.DSN[i:], "/")
	n, _ := strconv.Atoi(s.DSN[i+1 : i+j])
	return n
}

// appendConf appends lines to one of the server's configuration files
// (later lines win).
func (s *Server) appendConf(file, lines string) error {
	f, err := os.OpenFile(filepath.Join(s.dir, "data", file), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\n" + lines)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// kill9 sends SIGKILL to the postmaster (its pid is the first line of
// postmaster.pid) and to its children (from /proc). A server already gone
// is not an error.
func (s *Server) kill9() error {
	b, err := os.ReadFile(filepath.Join(s.dir, "data", "postmaster.pid"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return fmt.Errorf("postmaster.pid: %w", err)
	}
	if s.killed {
		return nil
	}
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err != nil || !strings.Contains(string(cmd), "postgres") {
		return nil // gone, and its pid maybe reused: not ours to kill
	}
	s.killed = true
	children := childrenOf(pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	for _, c := range children {
		_ = syscall.Kill(c, syscall.SIGKILL)
	}
	// Wait for the postmaster to be gone, so its port is free.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(st), ") Z ") {
			return nil // a zombie: dead, waiting for pg_ctl's reaping
		}
	}
	return fmt.Errorf("postmaster %d still alive 10s after SIGKILL", pid)
}

// childrenOf lists the processes whose parent is pid (Linux /proc).
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// the last ')'.
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		if len(f) >= 2 {
			if pp, _ := strconv.Atoi(f[1]); pp == pid {
				out = append(out, n)
			}
		}
	}
	return out
}
