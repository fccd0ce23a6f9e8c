package trigger

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/tidemq/tidemq/storage"
)

// With Options.NodeID (several nodes on one store), a trigger's Stats and
// RecentInvocations in its Status are the whole cluster's, whichever node
// is asked: every node writes its own share (its counters since it
// started, its recent invocations) to the store, at most once a second
// and only when they changed, under n/<trigger>0<node>; a Status adds
// every node's share up (counters summed, the maximum concurrency the
// largest, the recent invocations merged by time) with this node's live
// one (ConcurrentInvocations stays this node's: a stopped node's share
// would count its last invocations for ever). The shares of nodes that stopped stay, so the counters go on
// counting since the trigger was created; deleting or creating a trigger
// clears its shares. Manager.Stats, for /metrics and the alarms, stays this
// node's own, so that a counter scraped from several nodes is not counted
// several times.

// statsInterval is how often a node writes its share of the counters.
const statsInterval = time.Second

// nodeShare is one node's share of a trigger's counters.
type nodeShare struct {
	Stats  Stats        `json:"Stats"`
	Recent []Invocation `json:"Recent,omitempty"`
}

func statsKey(name, node string) []byte {
	return append(append(append([]byte(prefixStats), name...), 0), node...)
}

func statsPrefix(name string) []byte { return append(append([]byte(prefixStats), name...), 0) }

// statsLoop writes this node's shares every statsInterval until Close.
func (m *Manager) statsLoop() {
	t := time.NewTicker(statsInterval)
	defer t.Stop()
	written := map[string]string{} // trigger -> the share last written
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		if err := m.writeShares(written); err != nil {
			m.log.Warn("trigger: share the counters with the other nodes", "err", err)
		}
	}
}

// writeShares writes the shares that changed since written.
func (m *Manager) writeShares(written map[string]string) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	b := m.kv.NewBatch()
	now := map[string]string{}
	for name, r := range m.triggers {
		sh := nodeShare{Stats: r.stats.snapshot(), Recent: r.stats.calls.recent.list()}
		if sh.Stats == (Stats{}) {
			continue
		}
		v, err := json.Marshal(sh)
		if err != nil {
			m.mu.Unlock()
			return err
		}
		now[name] = string(v)
		if written[name] != string(v) {
			b.Set(statsKey(name, m.o.NodeID), v)
		}
	}
	m.mu.Unlock()
	if err := storage.CommitSync(b); err != nil {
		return err
	}
	clear(written)
	for k, v := range now {
		written[k] = v
	}
	return nil
}

// sharedStatus replaces a Status's Stats and RecentInvocations with the
// cluster's: the other nodes' stored shares and this node's live one.
func (m *Manager) sharedStatus(s *Status) {
	if m.o.NodeID == "" {
		return
	}
	recent := s.RecentInvocations
	err := m.kv.Scan(statsPrefix(s.Name), func(k, v []byte) error {
		if string(k[len(statsPrefix(s.Name)):]) == m.o.NodeID {
			return nil // this node's: live in s
		}
		var sh nodeShare
		if json.Unmarshal(v, &sh) != nil {
			return nil
		}
		s.Stats = addStats(s.Stats, sh.Stats)
		recent = append(recent, sh.Recent...)
		return nil
	})
	if err != nil {
		m.log.Warn("trigger: read the other nodes' counters", "trigger", s.Name, "err", err)
		return
	}
	sort.SliceStable(recent, func(i, j int) bool { return recent[i].Time.After(recent[j].Time) })
	if len(recent) > RecentInvocations {
		recent = recent[:RecentInvocations]
	}
	s.RecentInvocations = recent
}

// addStats adds b's counters to a's.
func addStats(a, b Stats) Stats {
	a.Invocations += b.Invocations
	a.Errors += b.Errors
	a.Timeouts += b.Timeouts
	a.Throttles += b.Throttles
	a.InvalidResponses += b.InvalidResponses
	a.PartialFailures += b.PartialFailures
	a.MessagesDeleted += b.MessagesDeleted
	a.MessagesFailed += b.MessagesFailed
	a.MessagesFiltered += b.MessagesFiltered
	a.DurationSeconds += b.DurationSeconds
	a.MaxConcurrentInvocations = max(a.MaxConcurrentInvocations, b.MaxConcurrentInvocations)
	a.PollErrors += b.PollErrors
	a.Pauses += b.Pauses
	return a
}
