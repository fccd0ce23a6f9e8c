// Package pgtest gives tests a throwaway PostgreSQL server and a fresh,
// isolated namespace (a schema) on it for each test.
//
// A test binary calls Main from its TestMain. When the environment
// variable TIDEMQ_TEST_POSTGRES holds a DSN, every test uses that server
// (.ci/run starts one for the whole run). Otherwise Main starts one for
// the binary: it finds initdb and pg_ctl (PATH, then
// /usr/lib/postgresql/*/bin), initdb's a cluster in a temporary directory
// (as the postgres user when running as root), starts it on a free port
// of 127.0.0.1 with fsync off, and stops and removes it when the binary
// ends. When neither is possible the tests that need PostgreSQL skip, or
// fail when CI=true.
//
// Schema gives each test its own schema, with search_path set in the DSN
// it returns, and drops it when the test ends: creating a schema takes
// about a millisecond where a database from a template takes 200 ms (PG
// 15, fsync off), and brokertest opens a fresh broker for each of its
// checks.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvDSN names the environment variable with the DSN of a server to use.
const EnvDSN = "TIDEMQ_TEST_POSTGRES"

var (
	baseDSN    string // the server's DSN, "" when there is none
	unavailErr error  // why there is none
)

// Main starts (or finds) the server, runs the tests and stops the server
// it started. Use it as: func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }.
func Main(m *testing.M) int {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		baseDSN = dsn
		return m.Run()
	}
	srv, err := Start()
	if err != nil {
		unavailErr = err
		return m.Run()
	}
	baseDSN = srv.DSN
	code := m.Run()
	if err := srv.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest: stopping PostgreSQL:", err)
	}
	return code
}

// DSN returns the server's DSN, or skips t (fails it when CI=true) when no
// server is available.
func DSN(t testing.TB) string {
	t.Helper()
	if baseDSN == "" {
		why := unavailErr
		if why == nil {
			why = errors.New("pgtest.Main was not called from TestMain")
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is required under CI=true: %v", why)
		}
		t.Skipf("no PostgreSQL: %v (set %s to a DSN)", why, EnvDSN)
	}
	return baseDSN
}

// Isolated is Schema for a test binary without Main (the e2e tests, of
// which only a few need PostgreSQL): without TIDEMQ_TEST_POSTGRES it
// starts a server for t alone and stops it when t ends.
func Isolated(t testing.TB) (dsn, schema string) {
	t.Helper()
	base := baseDSN
	if base == "" {
		base = os.Getenv(EnvDSN)
	}
	if base != "" {
		return schemaOn(t, base)
	}
	// Registered after the server's stop, so it runs before it.
	return schemaOn(t, Separate(t))
}

// Separate starts a server of its own for t (another cluster than the
// one Main or TIDEMQ_TEST_POSTGRES gives: its own initdb, port and data
// directory), stops it when t ends and returns its DSN. It skips t when
// no server can be started (fails it when CI=true).
func Separate(t testing.TB) string {
	t.Helper()
	srv, err := Start()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is required under CI=true: %v", err)
		}
		t.Skipf("no PostgreSQL: %v (set %s to a DSN)", err, EnvDSN)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return srv.DSN
}

// Database creates a fresh database for t on the server DSN gives and
// returns a DSN for it; the database is dropped when t ends. For a test
// that must not share a database with others: every CREATE or DROP SCHEMA
// (Schema, in every test running at the same time) discards the cached
// plans of every session of its database. About 200 ms, where Schema
// takes a millisecond.
func Database(t testing.TB) string {
	t.Helper()
	base := DSN(t)
	name := freshName()
	if err := execOn(base, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if err := execOn(base, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		return base + " dbname=" + name
	}
	u.Path = "/" + name
	return u.String()
}

// freshName is a random name for a test's schema or database.
func freshName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t_" + hex.EncodeToString(b[:])
}

// execOn runs sql on a connection of its own to base.
func execOn(base, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// Pool opens a pool on dsn for t, closed when t ends.
func Pool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// SchemaPool is Schema's DSN and a pool on it (Pool), for a test that
// migrates or opens what it needs itself.
func SchemaPool(t testing.TB) (string, *pgxpool.Pool) {
	t.Helper()
	dsn, _ := Schema(t)
	return dsn, Pool(t, dsn)
}

// Schema creates a fresh schema for t and returns a DSN whose connections
// use it (search_path), and the schema's name. The schema is dropped when
// t ends.
func Schema(t testing.TB) (dsn, schema string) {
	t.Helper()
	return schemaOn(t, DSN(t))
}

func schemaOn(t testing.TB, base string) (dsn, schema string) {
	t.Helper()
	schema = freshName()
	if err := execOn(base, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		if err := execOn(base, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema: %v", err)
		}
	})
	return WithSearchPath(base, schema), schema
}

// WithSearchPath returns dsn (a URL) with search_path set to schema.
func WithSearchPath(dsn, schema string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn + " search_path=" + schema
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Server is a PostgreSQL cluster started by Start.
type Server struct {
	DSN  string
	dir  string
	bin  string
	cred *syscall.Credential // the cluster's owner when started as root (owner)
	// killed: kill9 killed it (its postmaster.pid is stale).
	killed bool
}

// FindBin returns the directory holding initdb and pg_ctl: PATH first
// (where a link points, if initdb is one), then the newest
// /usr/lib/postgresql/*/bin.
func FindBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		// A link (/usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb):
		// the directory it points into holds the other programs too
		// (pg_basebackup, for StartPair).
		if r, err := filepath.EvalSymlinks(p); err == nil {
			if _, err := os.Stat(filepath.Join(filepath.Dir(r), "pg_ctl")); err == nil {
				return filepath.Dir(r), nil
			}
		}
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("initdb and pg_ctl not found in PATH or /usr/lib/postgresql/*/bin")
}

func versionOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start initialises and starts a throwaway cluster.
func Start() (*Server, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tidemq-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin}
	if s.cred, err = owner(); err == nil {
		err = giveTo(dir, s.cred)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-locale"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	var port int
	for attempt := 0; ; attempt++ {
		if port, err = freePort(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\n"+
			"fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\n"+
			"max_connections = 300\nmax_wal_size = 256MB\nlog_min_messages = warning\n", port, dir)
		f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(conf)
			f.Close()
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		out, err := s.run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start")
		if err == nil {
			break
		}
		if attempt >= 2 {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, log)
		}
	}
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return s, nil
}

// owner is the user that runs PostgreSQL's programs (and PgBouncer) when
// this process is root, as neither runs as root: postgres. It is nil when
// the process is not root.
func owner() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and there is no postgres user to run PostgreSQL's programs: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// giveTo makes dir cred's (owner's result; nil: nothing to do).
func giveTo(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return os.Chown(dir, int(cred.Uid), int(cred.Gid))
}

// run runs one of the server's programs, as its owner when root.
func (s *Server) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, prog), args...)
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
		cmd.Env = append(os.Environ(), "HOME="+s.dir)
	}
	cmd.Dir = s.dir
	return cmd.CombinedOutput()
}

// Stop stops the server at once and removes its files.
func (s *Server) Stop() error {
	out, err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	rmErr := os.RemoveAll(s.dir)
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return rmErr
}

// Halt stops the server (fast shutdown: connections are closed) and
// keeps its files, for Resume to start it again on the same port: tests
// of recovery from a database restart.
func (s *Server) Halt() error {
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "fast", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// Resume starts a halted server again.
func (s *Server) Resume() error {
	data := filepath.Join(s.dir, "data")
	if out, err := s.run("pg_ctl", "-D", data, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %v: %s", err, out)
	}
	return nil
}
