package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// This file cuts links rather than killing processes: a node runs in a
// network namespace of its own, reached over two veth pairs, one that
// carries its PostgreSQL traffic (to a TCP forwarder in this process,
// which passes it on to the test's PostgreSQL on loopback) and one that
// carries its clients'. Cutting a link is setting the host end of its
// veth pair down: from then on the node's packets on it vanish, neither
// answered nor refused, as on a pulled cable, until it is set up again.
// It needs root and iproute2 (ip netns, veth); without them the tests
// skip and say why.

// nsNode is a network namespace with its two links.
type nsNode struct {
	t    *testing.T
	name string
	db   vethLink // to PostgreSQL (through dbFwd)
	cl   vethLink // to its clients
}

// vethLink is a veth pair: host end in this namespace, peer in the node's.
type vethLink struct {
	host, peer     string // interface names
	hostIP, peerIP string
}

// ipCmd runs ip with args.
func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// newNSNode creates a namespace with its two links up, or skips t.
func newNSNode(t *testing.T) *nsNode {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cutting links needs network namespaces: run as root (CI does)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("cutting links needs iproute2's ip (apt-get install iproute2)")
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	n := &nsNode{t: t, name: "tidemq-" + id}
	if err := ipCmd("netns", "add", n.name); err != nil {
		t.Skipf("network namespaces are not available here: %v", err)
	}
	t.Cleanup(func() {
		_ = ipCmd("netns", "del", n.name) // removes the veth pairs with it
	})
	// Two /30s of 10.231.0.0/16 picked at random, avoiding any in use.
	subnet := func() (string, string, error) {
		for range 20 {
			var x [2]byte
			_, _ = rand.Read(x[:])
			third, fourth := int(x[0]), int(x[1])&0xfc
			prefix := fmt.Sprintf("10.231.%d.%d", third, fourth)
			out, _ := exec.Command("ip", "-o", "addr", "show", "to", prefix+"/30").CombinedOutput()
			if len(strings.TrimSpace(string(out))) == 0 {
				return fmt.Sprintf("10.231.%d.%d", third, fourth+1), fmt.Sprintf("10.231.%d.%d", third, fourth+2), nil
			}
		}
		return "", "", errors.New("no free /30 in 10.231.0.0/16")
	}
	for i, l := range []*vethLink{&n.db, &n.cl} {
		hostIP, peerIP, err := subnet()
		if err != nil {
			t.Fatal(err)
		}
		*l = vethLink{host: fmt.Sprintf("tq%s%dh", id, i), peer: fmt.Sprintf("tq%s%dn", id, i), hostIP: hostIP, peerIP: peerIP}
		for _, args := range [][]string{
			{"link", "add", l.host, "type", "veth", "peer", "name", l.peer},
			{"link", "set", l.peer, "netns", n.name},
			{"addr", "add", l.hostIP + "/30", "dev", l.host},
			{"link", "set", l.host, "up"},
			{"netns", "exec", n.name, "ip", "addr", "add", l.peerIP + "/30", "dev", l.peer},
			{"netns", "exec", n.name, "ip", "link", "set", l.peer, "up"},
			{"netns", "exec", n.name, "ip", "link", "set", "lo", "up"},
		} {
			if err := ipCmd(args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

// cut sets the host end of l down: the node's packets on it vanish.
func (n *nsNode) cut(l vethLink) {
	n.t.Helper()
	if err := ipCmd("link", "set", l.host, "down"); err != nil {
		n.t.Fatal(err)
	}
}

// mend sets it up again.
func (n *nsNode) mend(l vethLink) {
	n.t.Helper()
	if err := ipCmd("link", "set", l.host, "up"); err != nil {
		n.t.Fatal(err)
	}
}

// serve starts `tidemq serve` in the namespace, listening on its client
// link, on the PostgreSQL of dsn reached through a forwarder on its
// database link.
func (n *nsNode) serve(dsn string, flags ...string) *server {
	n.t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		n.t.Fatal(err)
	}
	fwd := forward(n.t, n.db.hostIP+":0", u.Host)
	u.Host = fwd
	args := append([]string{"serve", "--listen", n.cl.peerIP + ":0", "--store", u.String()}, flags...)
	s := launchVia(n.t, []string{"ip", "netns", "exec", n.name}, args, nil)
	s.waitHealthy()
	return s
}

// forward accepts TCP connections on addr and passes each to target until
// the test ends; it returns the address it listens on.
func forward(t *testing.T, addr, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// A leader cut off from PostgreSQL (its database link down; its clients
// still reach it): it stops leading within its lease (its renewal times
// out), the other node takes the lease over and runs the trigger, and the
// requests the cut node is sent fail with ServiceUnavailable within a
// bound instead of hanging. Once the link is mended, it serves again and
// does not take the lease back from the node that holds it.
func TestServePostgresNodeCutOffFromPostgreSQL(t *testing.T) {
	t.Parallel()
	ns := newNSNode(t)
	dsn, _ := pgtest.Isolated(t)
	dir := t.TempDir()
	fn, calls := nsTarget(t, ns.cl.hostIP)
	flags := func(name string) []string {
		return []string{"--data-dir", filepath.Join(dir, name), "--no-alarms", "--lease-ttl", "3s", "--cluster-reload", "300ms"}
	}
	a := ns.serve(dsn, flags("a")...)
	eventuallyE2E(t, "A leads", func() bool { return strings.Contains(a.logs.String(), leaderLog) })
	b := startServer(t, append([]string{"--store", dsn}, flags("b")...)...)

	jobs := b.createQueue(t, "jobs", map[string]string{"VisibilityTimeout": "30"})
	b.adminJSON(t, http.MethodPost, "/tidemq/triggers", `{"Name":"jobs-fn","Queue":"jobs","Timeout":5,"BatchSize":1,
		"Target":{"URL":"`+fn+`/jobs"}}`, http.StatusCreated)
	b.send(t, jobs, "before")
	nextInvocation(t, calls, "before")

	ns.cut(ns.db)
	cut := time.Now()
	mended := false
	t.Cleanup(func() {
		if !mended {
			ns.mend(ns.db)
		}
	})
	// A request to the cut node fails, clearly and in bounded time.
	cl := sdkClient(a)
	type result struct {
		err  error
		took time.Duration
	}
	sent := make(chan result, 1)
	go func() {
		rctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := cl.SendMessage(rctx, &sqs.SendMessageInput{QueueUrl: aws.String(a.url + "/000000000000/jobs"), MessageBody: aws.String("to the cut node")})
		sent <- result{err, time.Since(cut)}
	}()
	eventuallyE2E(t, "A stops leading", func() bool { return strings.Contains(a.logs.String(), "lease lost") })
	t.Logf("A stopped leading %v after the cut", time.Since(cut).Round(time.Millisecond))
	eventuallyE2E(t, "B takes the lease over", func() bool { return strings.Contains(b.logs.String(), leaderLog) })
	t.Logf("B leads %v after the cut (--lease-ttl 3s)", time.Since(cut).Round(time.Millisecond))
	r := <-sent
	var ae smithy.APIError
	if !errors.As(r.err, &ae) || ae.ErrorCode() != "ServiceUnavailable" {
		t.Errorf("a send to the node cut off from PostgreSQL: %v, want ServiceUnavailable", r.err)
	}
	t.Logf("a send to the cut node failed after %v: %v", r.took.Round(time.Millisecond), r.err)
	if r.took > 30*time.Second {
		t.Errorf("the send to the cut node took %v to fail", r.took)
	}
	b.send(t, jobs, "during the cut")
	nextInvocation(t, calls, "during the cut")

	ns.mend(ns.db)
	mended = true
	mendedAt := time.Now()
	for {
		rctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := cl.SendMessage(rctx, &sqs.SendMessageInput{QueueUrl: aws.String(a.url + "/000000000000/jobs"), MessageBody: aws.String("after the cut")})
		cancel()
		if err == nil {
			break
		}
		if time.Since(mendedAt) > 30*time.Second {
			t.Fatalf("A still fails 30 s after its link was mended: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("A serves again %v after its link was mended", time.Since(mendedAt).Round(time.Millisecond))
	nextInvocation(t, calls, "after the cut")
	if n := strings.Count(a.logs.String(), leaderLog); n != 1 {
		t.Errorf("A took the leader lease %d times, want once (B holds it)", n)
	}
}

// A leader cut off from its clients (its client link down; PostgreSQL
// still reachable) keeps the lease and keeps running the trigger: the
// clients go through the other node, whose sends the leader's trigger
// delivers, each once; the other node does not take over. Once mended,
// the leader answers its clients again.
func TestServePostgresLeaderCutOffFromItsClients(t *testing.T) {
	t.Parallel()
	ns := newNSNode(t)
	dsn, _ := pgtest.Isolated(t)
	dir := t.TempDir()
	fn, calls := nsTarget(t, ns.db.hostIP) // the trigger's target, reached over the database link
	flags := func(name string) []string {
		return []string{"--data-dir", filepath.Join(dir, name), "--no-alarms", "--lease-ttl", "3s", "--cluster-reload", "300ms"}
	}
	a := ns.serve(dsn, flags("a")...)
	eventuallyE2E(t, "A leads", func() bool { return strings.Contains(a.logs.String(), leaderLog) })
	b := startServer(t, append([]string{"--store", dsn}, flags("b")...)...)
	jobs := b.createQueue(t, "jobs", map[string]string{"VisibilityTimeout": "30"})
	b.adminJSON(t, http.MethodPost, "/tidemq/triggers", `{"Name":"jobs-fn","Queue":"jobs","Timeout":5,"BatchSize":1,
		"Target":{"URL":"`+fn+`/jobs"}}`, http.StatusCreated)

	ns.cut(ns.cl)
	mended := false
	t.Cleanup(func() {
		if !mended {
			ns.mend(ns.cl)
		}
	})
	hc := &http.Client{Timeout: 2 * time.Second}
	if resp, err := hc.Get(a.url + "/health"); err == nil {
		resp.Body.Close()
		t.Fatalf("the node cut off from its clients answered: %s", resp.Status)
	}
	// Three lease periods: the clients' messages, sent through B, are
	// delivered by A's trigger, each once.
	for i := range 6 {
		body := fmt.Sprintf("cut-%d", i)
		b.send(t, jobs, body)
		nextInvocation(t, calls, body)
		time.Sleep(time.Second)
	}
	select {
	case in := <-calls:
		t.Errorf("an extra invocation: %+v", in)
	case <-time.After(500 * time.Millisecond):
	}
	if strings.Contains(b.logs.String(), leaderLog) {
		t.Error("B took the lease from a leader that only lost its clients")
	}
	ns.mend(ns.cl)
	mended = true
	eventuallyE2E(t, "A answers its clients again", func() bool {
		resp, err := hc.Get(a.url + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if n := a.triggerInvocations(t, "jobs-fn"); n != 6 {
		t.Errorf("A ran %d invocations while cut off from its clients, want 6", n)
	}
}

// nsTarget is fnTarget listening on addr (an address of this namespace
// that a node in another reaches).
func nsTarget(t *testing.T, addr string) (string, chan invocation) {
	t.Helper()
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv, ch := fnTarget(t)
	srv.Listener.Close()
	go func() { _ = http.Serve(ln, srv.Config.Handler) }()
	t.Cleanup(func() { ln.Close() })
	return "http://" + ln.Addr().String(), ch
}
