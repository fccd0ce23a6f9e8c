package postgres

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Announcements to the other nodes go out after the commit they follow,
// from one goroutine a node, never inside a write's transaction.
//
// Why: PostgreSQL serialises every transaction that NOTIFYs behind one
// lock, held from just before its commit until the commit is done, WAL
// flush included. With a pg_notify in every group commit the node's
// committers, and every node's, flushed one after the other instead of
// together: measured with pgbench on the group statement (16 clients,
// prepared), 6 to 9 times fewer commits a second with the NOTIFY than
// without. A transaction that only NOTIFYs writes no WAL, so it holds that
// lock for a moment.
//
// announce records queue names; announceLoop sends all the names recorded
// since its last round in one statement, so under load one NOTIFY round
// carries many commits and each queue is named once. A waiter on another
// node learns of a commit one round trip later than before; a waiter on
// this node is woken directly (waiters.wake) as before. If the node dies
// between a commit and its announcement, other nodes' long polls find the
// message when they look again (at their wait's end or the queue's next
// deadline), as after a lost LISTEN connection.
type announcer struct {
	mu      sync.Mutex
	pending map[string]struct{}
	kick    chan struct{} // one token: a round is due
}

// announce tells the other nodes, soon, that each of queues may have
// receivable messages. Call it after the commit that made them so.
func (b *Broker) announce(queues ...string) {
	if len(queues) == 0 {
		return
	}
	a := &b.announcer
	a.mu.Lock()
	if a.pending == nil {
		a.pending = map[string]struct{}{}
	}
	for _, q := range queues {
		a.pending[q] = struct{}{}
	}
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default: // a round is already due: it will take these too
	}
}

// take returns the names recorded since the last call.
func (a *announcer) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pending) == 0 {
		return nil
	}
	names := make([]string, 0, len(a.pending))
	for q := range a.pending {
		names = append(names, q)
	}
	clear(a.pending)
	// Changes before wakes: a node that hears of a queue's change drops
	// its cached row before a wake makes a long poll look again.
	slices.SortFunc(names, func(x, y string) int {
		return cmp.Compare(b2i(!strings.HasPrefix(x, changedPrefix)), b2i(!strings.HasPrefix(y, changedPrefix)))
	})
	return names
}

// announceSQL notifies once per name, in a transaction of its own.
const announceSQL = `SELECT count(pg_notify($1, n)) FROM unnest($2::text[]) AS n`

// announceLoop sends the announcements until the broker closes, and those
// recorded before then.
func (b *Broker) announceLoop() {
	defer b.wg.Done()
	for {
		select {
		case <-b.announcer.kick:
			b.sendAnnouncements()
		case <-b.closing:
			b.sendAnnouncements()
			return
		}
	}
}

func (b *Broker) sendAnnouncements() {
	names := b.announcer.take()
	if len(names) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.pool.Exec(ctx, announceSQL, b.channel, names); err != nil {
		// The other nodes' long polls look again by themselves; a lost
		// announcement delays them, it loses nothing.
		b.log.Warn("postgres: NOTIFY failed; other nodes' long polls wake at their next look", "err", err, "queues", len(names))
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
