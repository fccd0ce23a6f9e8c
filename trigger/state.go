package trigger

import (
	"encoding/json"
	"fmt"

	"github.com/tidemq/tidemq/storage"
)

// Registry is what the Manager keeps durably: every trigger's settings,
// the secrets of its target included. The Manager keeps what it answers
// from in memory and writes through the Registry first: a change is made
// in memory, and acknowledged, only once the Registry returned, which it
// does only once the change is durable. One implementation keeps the
// triggers in a storage.Store (kvRegistry, in the key layout of keys.go):
// `tidemq serve` gives the manager the one store it shares with the
// engine.
//
// The secrets are kept as given: whoever can read the store (the data
// directory) can read them, as they can read the messages (see secrets.go).
//
// With several nodes sharing the store, a node's memory may be stale: so
// every change is computed from the Registry's current state (UpdateTrigger
// runs against it, exclusively of every other node's change) and never
// written back from memory. A delete is final; an update patches the
// trigger as stored; a create of a name that exists anywhere is refused.
type Registry interface {
	// LoadTriggers returns every trigger, by name.
	LoadTriggers() ([]*Config, error)
	// PutTrigger stores c, replacing the trigger of the same name, and
	// returns once that is durable. It does not keep or modify c. Only
	// imports and tests use it: the Manager changes triggers with
	// UpdateTrigger.
	PutTrigger(c *Config) error
	// UpdateTrigger calls f with the named trigger as stored now (nil when
	// there is none), exclusively of every other UpdateTrigger on every
	// node sharing the store, and stores what f returns (deletes the
	// trigger when f returns nil), returning once that is durable. When f
	// fails nothing changes and its error is returned.
	UpdateTrigger(name string, f func(cur *Config) (*Config, error)) error
}

// kvRegistry keeps a Registry in a storage.Store, under Namespace. Every
// method writes one batch and waits until it is durable.
type kvRegistry struct {
	kv storage.Store // the store's Namespace
}

var _ Registry = kvRegistry{}

// newKVRegistry keeps the triggers in st, under Namespace.
func newKVRegistry(st storage.Store) kvRegistry {
	return kvRegistry{kv: storage.Prefix(st, Namespace)}
}

func (r kvRegistry) LoadTriggers() ([]*Config, error) {
	var out []*Config
	err := r.kv.Scan([]byte(prefixTrigger), func(k, v []byte) error {
		name := string(k[len(prefixTrigger):])
		c := new(Config)
		if err := json.Unmarshal(v, c); err != nil {
			return fmt.Errorf("trigger: stored trigger %q: %w", name, err)
		}
		if c.Name != name {
			return fmt.Errorf("trigger: the trigger stored as %q is named %q", name, c.Name)
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (r kvRegistry) PutTrigger(c *Config) error {
	b := r.kv.NewBatch()
	if err := putTrigger(b, c); err != nil {
		return err
	}
	return storage.CommitSync(b)
}

// putTrigger adds c to b.
func putTrigger(b interface{ Set(k, v []byte) }, c *Config) error {
	v, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	b.Set(triggerKey(c.Name), v)
	return nil
}

// RegistryLock is the storage.Update lock of every trigger change: a store
// shared by several nodes announces changes under this name.
const RegistryLock = "trg"

func (r kvRegistry) UpdateTrigger(name string, f func(cur *Config) (*Config, error)) error {
	return storage.Update(r.kv, RegistryLock, func(tx storage.Txn) error {
		var cur *Config
		v, ok, err := tx.Get(triggerKey(name))
		if err != nil {
			return err
		}
		if ok {
			cur = new(Config)
			if err := json.Unmarshal(v, cur); err != nil {
				return fmt.Errorf("trigger: stored trigger %q: %w", name, err)
			}
		}
		next, err := f(cur)
		if err != nil {
			return err
		}
		if cur == nil || next == nil { // created or deleted: no counters yet
			var old [][]byte
			err := tx.Scan(statsPrefix(name), func(k, _ []byte) error {
				old = append(old, append([]byte(nil), k...))
				return nil
			})
			if err != nil {
				return err
			}
			for _, k := range old {
				tx.Delete(k)
			}
		}
		if next == nil {
			tx.Delete(triggerKey(name))
			return nil
		}
		return putTrigger(tx, next)
	})
}

// imported reports whether the triggers.json of an older release was
// imported.
func (r kvRegistry) imported() (bool, error) { return storage.Has(r.kv, []byte(keyImported)) }
