package trigger

import (
	"context"
	"encoding/json"
	"time"
)

// Several nodes can share one Store (`tidemq serve --store postgres://`).
// Each keeps every trigger in memory, to answer the admin API, but changes
// a trigger only against the store's current state (Registry.UpdateTrigger).
// Every change is announced to the other nodes (PostgreSQL NOTIFY), whose
// Invalidate reloads at once; they also reload every Options.Reload, a
// safety net for an announcement lost while their LISTEN connection was
// down. With Options.Follow the triggers run only inside
// Lead, which `tidemq serve` calls on the node holding the lease: one node
// polls, and the others take over when it stops or loses the lease. One
// lease for all the triggers rather than one each: the alarms about
// triggers read the counters of the node that runs them, so alarms and
// triggers share the node, and a single renewal keeps failover simple; a
// trigger is I/O bound, so one node polls them all.

// Lead runs the triggers until ctx ends, then stops their polls and waits
// for their invocations in flight (each holds its batch invisible for the
// queue's visibility timeout, which the next leader respects). It reloads
// them first, to run what other nodes changed.
func (m *Manager) Lead(ctx context.Context) {
	if err := m.Reload(); err != nil {
		m.log.Warn("trigger: reload the triggers", "err", err)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.leading = true
	m.startAllLocked()
	m.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-m.stop:
	}
	m.mu.Lock()
	m.leading = false
	var old []*runner
	for name, r := range m.triggers {
		r.stopPolling()
		old = append(old, r)
		// A fresh runner, to start when this node leads again.
		nr := m.newRunner(r.cfg, QueueFacts{}, "", nil)
		nr.stats = r.stats
		m.triggers[name] = nr
	}
	m.mu.Unlock()
	for _, r := range old {
		r.wait()
	}
	m.log.Info("triggers stopped: this node no longer holds their lease", "count", len(old))
}

// reloadLoop reloads every Options.Reload, and when invalidated, until
// Close.
func (m *Manager) reloadLoop() {
	t := time.NewTicker(m.o.Reload)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		case <-m.invalidated:
		}
		if err := m.Reload(); err != nil {
			m.log.Warn("trigger: reload the triggers", "err", err)
		}
	}
}

// Reload makes what the manager answers from, and runs when it leads,
// what the Store holds: triggers another node created, changed or
// deleted.
func (m *Manager) Reload() error {
	// mu is held across the read, so that no change of this node can fall
	// between the read and the update (and be taken for a deletion).
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	cfgs, err := m.reg.LoadTriggers()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, c := range cfgs {
		seen[c.Name] = true
		old, ok := m.triggers[c.Name]
		if ok && sameConfig(old.cfg, c) {
			continue
		}
		r := m.newRunner(c, QueueFacts{}, "", nil)
		if ok {
			r.stats = old.stats
			old.stopPolling()
			old.wait()
		}
		m.triggers[c.Name] = r
		if m.leading {
			m.startLocked(r)
		}
	}
	for name, r := range m.triggers {
		if !seen[name] {
			r.stopPolling()
			r.wait()
			delete(m.triggers, name)
		}
	}
	return nil
}

// sameConfig reports whether two settings are the same as stored.
func sameConfig(a, b *Config) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// Invalidate tells the manager that another node changed the triggers: it
// reloads at once (in the background; calls while a reload is pending make
// one reload). It does nothing unless Options.Reload is set.
func (m *Manager) Invalidate() {
	select {
	case m.invalidated <- struct{}{}:
	default:
	}
}
