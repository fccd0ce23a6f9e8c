package trigger

import "github.com/tidemq/tidemq/storage"

// StoredTriggers returns the triggers kept in st, as a Manager given st
// keeps them, for the tests of package trigger_test.
func StoredTriggers(st storage.Store) ([]*Config, error) { return newKVRegistry(st).LoadTriggers() }

// StoreTrigger keeps c in st as a Manager given st would.
func StoreTrigger(st storage.Store, c *Config) error { return newKVRegistry(st).PutTrigger(c) }

// WriteShares writes m's share of the counters now, as its stats loop
// does every second.
func WriteShares(m *Manager) error { return m.writeShares(map[string]string{}) }
