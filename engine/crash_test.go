package engine

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// The crash test runs a workload in a child process (this test binary,
// re-executed), kills it with SIGKILL at a random moment, reopens the store
// and checks everything the child had acknowledged before it died: every
// acknowledged send is there unless a delete of it was issued, every
// acknowledged delete stays deleted, received messages keep their receive
// count and stay in flight until their deadline, and FIFO sequence numbers
// keep growing across restarts.

const crashChildEnv = "TIDEMQ_CRASH_CHILD_DIR"

// crashPageSize pages the standard queue's backlog in small pages, so that
// crashes hit page-outs and page-ins too.
const crashPageSize = 8

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test spawns processes")
	}
	dir := t.TempDir()
	rounds := 12
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	sent := map[string]bool{}     // acknowledged sends
	deleted := map[string]bool{}  // acknowledged deletes
	deleting := map[string]bool{} // deletes issued, acknowledged or not
	received := map[string]int{}  // highest acknowledged receive count
	var maxFIFOSeq uint64         // highest acknowledged FIFO sequence number so far
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, "TIDEMQ_CRASH_ROUND="+strconv.Itoa(round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		lines.Buffer(make([]byte, 1<<20), 1<<20)
		killAfter := time.Duration(30+rng.Intn(250)) * time.Millisecond
		var killOnce sync.Once
		kill := func() { killOnce.Do(func() { _ = cmd.Process.Signal(syscall.SIGKILL) }) }
		started := false
		roundMaxSeq := maxFIFOSeq
		for lines.Scan() {
			f := strings.Fields(lines.Text())
			if len(f) == 0 {
				continue
			}
			switch f[0] {
			case "READY":
				if !started {
					started = true
					time.AfterFunc(killAfter, kill)
				}
			case "S":
				sent[f[1]] = true
				if len(f) == 3 {
					seq, _ := strconv.ParseUint(f[2], 10, 64)
					if seq <= maxFIFOSeq {
						t.Fatalf("round %d: FIFO sequence %d reused (previous rounds reached %d)", round, seq, maxFIFOSeq)
					}
					roundMaxSeq = max(roundMaxSeq, seq)
				}
			case "R":
				n, _ := strconv.Atoi(f[2])
				received[f[1]] = max(received[f[1]], n)
			case "d":
				deleting[f[1]] = true
			case "D":
				deleted[f[1]] = true
			}
		}
		kill()
		_ = cmd.Wait()
		maxFIFOSeq = roundMaxSeq
		verifyCrashState(t, dir, round, sent, deleting, deleted, received)
	}
	t.Logf("%d rounds: %d sends, %d deletes, %d receives acknowledged and verified", rounds, len(sent), len(deleted), len(received))
}

func verifyCrashState(t *testing.T, dir string, round int, sent, deleting, deleted map[string]bool, received map[string]int) {
	t.Helper()
	store, err := pebble.Open(dir, pebble.Options{})
	if err != nil {
		t.Fatalf("round %d: reopen: %v", round, err)
	}
	// The child wrote checkpoints as it went (CheckpointInterval): this
	// start-up reads the last one and what came after it.
	e, err := Open(Options{Store: store, SweepInterval: -1, PageSize: crashPageSize})
	if err != nil {
		t.Fatalf("round %d: load: %v", round, err)
	}
	present := presentMessages(t, e, round)
	before := queueCounts(e)
	// The same store read without a checkpoint (its canary removed, as an
	// older binary does), and after a clean shutdown's: the same state.
	if err := e.Close(); err != nil {
		t.Fatalf("round %d: close: %v", round, err)
	}
	for _, how := range []string{"every record", "a clean shutdown's checkpoint"} {
		if store, err = pebble.Open(dir, pebble.Options{}); err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		if how == "every record" {
			b := store.NewBatch()
			b.Delete(canaryKey())
			if err := storage.CommitSync(b); err != nil {
				t.Fatal(err)
			}
		}
		if e, err = Open(Options{Store: store, SweepInterval: -1, PageSize: crashPageSize}); err != nil {
			t.Fatalf("round %d: load from %s: %v", round, how, err)
		}
		if after := queueCounts(e); !maps.Equal(before, after) {
			t.Errorf("round %d: ready, delayed, in flight, bytes by queue: %v after the crash, %v from %s", round, before, after, how)
		}
		again := presentMessages(t, e, round)
		if len(again) != len(present) {
			t.Errorf("round %d: %d messages from %s, %d after the crash", round, len(again), how, len(present))
		}
		for body, m := range present {
			if a := again[body]; a == nil || a.ReceiveCount != m.ReceiveCount || a.state != m.state || a.VisibleAt != m.VisibleAt {
				t.Errorf("round %d: message %s differs from %s: %+v, after the crash %+v", round, body, how, a, m)
			}
		}
		if how == "every record" && e.loadedRecords < len(present) {
			t.Errorf("round %d: a load without a checkpoint read %d records of %d messages", round, e.loadedRecords, len(present))
		}
		if err := e.Close(); err != nil {
			t.Fatalf("round %d: close: %v", round, err)
		}
	}
	for body := range sent {
		if !deleting[body] && present[body] == nil {
			t.Errorf("round %d: acknowledged send %s lost", round, body)
		}
	}
	for body := range deleted {
		if present[body] != nil {
			t.Errorf("round %d: acknowledged delete %s came back", round, body)
		}
	}
	for body, n := range received {
		m := present[body]
		if m == nil {
			continue
		}
		if m.ReceiveCount < n {
			t.Errorf("round %d: %s receive count %d, acknowledged %d", round, body, m.ReceiveCount, n)
		}
		if m.state != stateInflight {
			t.Errorf("round %d: %s was received with an hour's visibility but is %v after restart", round, body, m.state)
		}
	}
}

// queueCounts returns each queue's ready, delayed, in-flight and
// dead-lettered counts and its bytes. (How many of the ready ones are
// paged depends on the start-up: a start-up pages the ready messages it
// finds outside a checkpoint's pages.)
func queueCounts(e *Engine) map[string][5]int {
	out := make(map[string][5]int)
	for _, q := range e.queues {
		out[q.name] = [5]int{q.nReady, q.nDelayed, q.nInflight, q.nDeadLettered, int(q.bytes)}
	}
	return out
}

// presentMessages returns every message of e by body, paged ones read from
// their pages (and checked against their page's count).
func presentMessages(t *testing.T, e *Engine, round int) map[string]*message {
	t.Helper()
	present := map[string]*message{}
	for _, q := range e.queues {
		for _, m := range q.msgs {
			if m.state == statePending {
				t.Errorf("round %d: message %s still pending after load", round, m.Body)
			}
			present[m.Body] = m
		}
		pages, groups := q.cold.pages, []*group(nil)
		if q.fifo {
			pages, groups = q.coldPages()
		}
		for i, p := range pages {
			n := 0
			read := func(m *message) {
				m.state = stateReady
				present[m.Body] = m
				n++
			}
			if groups != nil {
				q.readGroupRun(groups[i], p, read)
			} else {
				q.readRun(p.lo, p.hi, read)
			}
			if n != p.n {
				t.Errorf("round %d: page [%d, %d) of %s holds %d messages, counted %d", round, p.lo, p.hi, q.name, n, p.n)
			}
		}
	}
	return present
}

// TestCrashChild is the workload of TestCrashRecovery; it does nothing
// unless started by it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("run by TestCrashRecovery")
	}
	round := os.Getenv("TIDEMQ_CRASH_ROUND")
	store, err := pebble.Open(dir, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The sweep writes a checkpoint every few milliseconds, so that kills
	// land before, during and after checkpoints, with tails of every kind.
	e, err := Open(Options{Store: store, SweepInterval: 3 * time.Millisecond, CheckpointInterval: time.Nanosecond, PageSize: crashPageSize})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "crash"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "crash.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
		mu.Unlock()
	}
	say("READY")
	hour := 3600
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				queue := "crash"
				fifo := w%2 == 1
				if fifo {
					queue = "crash.fifo"
				}
				var entries []tidemq.SendEntry
				for j := 0; j < 5; j++ {
					body := fmt.Sprintf("r%s-w%d-%d-%d", round, w, i, j)
					en := tidemq.SendEntry{ID: strconv.Itoa(j), Body: body}
					if fifo {
						en.MessageGroupID = fmt.Sprintf("g%d", j%3)
						en.MessageDeduplicationID = body
					}
					entries = append(entries, en)
				}
				res, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: queue, Entries: entries, Batch: true})
				if err != nil {
					t.Error(err)
					return
				}
				for j, r := range res {
					if r.Err == nil {
						if fifo {
							seq, _ := strconv.ParseUint(r.SequenceNumber, 10, 64)
							say("S %s %d", entries[j].Body, seq)
						} else {
							say("S %s", entries[j].Body)
						}
					}
				}
				msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: queue, MaxNumberOfMessages: new(10), VisibilityTimeout: &hour})
				if err != nil {
					t.Error(err)
					return
				}
				var dels []tidemq.DeleteEntry
				for k, m := range msgs {
					say("R %s %d", m.Body, m.ApproximateReceiveCount)
					if k%2 == 0 {
						say("d %s", m.Body)
						dels = append(dels, tidemq.DeleteEntry{ID: strconv.Itoa(k), ReceiptHandle: m.ReceiptHandle})
					}
				}
				if len(dels) == 0 {
					continue
				}
				errs, err := e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: queue, Entries: dels})
				if err != nil {
					t.Error(err)
					return
				}
				for k, de := range dels {
					if errs[k] == nil {
						n, _ := strconv.Atoi(de.ID)
						say("D %s", msgs[n].Body)
					}
				}
			}
		}(w)
	}
	wg.Wait()
}
