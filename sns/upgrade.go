package sns

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/tidemq/tidemq/storage"
)

// The upgrade from the releases that kept the service's state in files of
// their own, in a directory (DATA_DIR/sns for `tidemq serve`):
//
//	sns-topics.json   topics, subscriptions and unsubscribe tombstones (Registrations, JSON)
//	sns-signing.pem   the signing key and its certificate
//	outbox/           the outbox, a store of its own (Pebble), keyed 'm' + <id>, 'd' + <id><index>,
//	                  'y' + <expiry><dedup key>, and 'x' + <dedup key> for the first release's
//	                  deduplication entries (keys.go has the rest of the layout)
//
// ImportFiles copies all of it into the store, in one durable batch with
// the "imported" mark, and then moves the directory aside: the next start
// finds nothing to import. A crash between the batch and the move leaves
// the mark, and the next start only moves the directory.
const (
	legacyStateFile = "sns-topics.json"
	legacyKeyFile   = "sns-signing.pem"
	// LegacyOutboxDir is the outbox store of the releases before the one
	// store, in their directory.
	LegacyOutboxDir = "outbox"
)

// ImportFiles imports into st the state that a release before the one
// store kept in dir: topics, subscriptions, the signing key, and the
// publishes still in the outbox, which the next Open delivers. It then
// renames dir to dir.imported (or dir.imported-2, ...), which can be
// deleted once there is no going back. A dir that does not exist is
// nothing to import. openOutbox opens dir/LegacyOutboxDir (a Pebble store:
// the caller has the technology); ImportFiles closes it. st is not closed.
//
// What st already holds wins over the files: a topic or subscription of
// the same ARN, and the signing key. Imported publishes are numbered after
// st's own, so none of them is overwritten.
func ImportFiles(st storage.Store, dir string, openOutbox func(path string) (storage.Store, error), log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("sns: %w", err)
	}
	kv := newKVState(st)
	done, err := kv.imported()
	if err != nil {
		return err
	}
	if done {
		to, err := storage.MoveAside(dir)
		if err != nil {
			return fmt.Errorf("sns: %w", err)
		}
		log.Warn("sns: the SNS state in the data directory was imported into the store before; its old directory was moved aside unread",
			"dir", dir, "moved_to", to)
		return nil
	}
	b := kv.kv.NewBatch()
	n, err := importFiles(kv, b, dir, openOutbox, log)
	if err != nil {
		return fmt.Errorf("sns: import %s: %w", dir, err)
	}
	mark, _ := json.Marshal(map[string]any{"dir": dir, "topics": n.topics, "subscriptions": n.subs, "publishes": n.publishes})
	b.Set([]byte(keyImported), mark)
	if err := storage.CommitSync(b); err != nil {
		return fmt.Errorf("sns: import %s: %w", dir, err)
	}
	to, err := storage.MoveAside(dir)
	if err != nil {
		return fmt.Errorf("sns: %w", err)
	}
	log.Info("sns: imported the SNS state of an older release into the store", "topics", n.topics, "subscriptions", n.subs,
		"pending_publishes", n.publishes, "signing_key", n.key, "old_files_moved_to", to)
	return nil
}

type importCounts struct {
	topics, subs, publishes int
	key                     bool
}

// importFiles adds what dir holds to b.
func importFiles(kv kvState, b storage.Batch, dir string, openOutbox func(string) (storage.Store, error), log *slog.Logger) (importCounts, error) {
	var n importCounts
	have, err := kv.LoadRegistry()
	if err != nil {
		return n, err
	}
	old, err := readLegacyState(filepath.Join(dir, legacyStateFile))
	if err != nil {
		return n, err
	}
	var c RegistryChange
	topics, subs, tombs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, t := range have.Topics {
		topics[t.ARN] = true
	}
	for _, sub := range have.Subscriptions {
		subs[sub.ARN] = true
	}
	for _, sub := range have.Unsubscribed {
		tombs[sub.Token] = true
	}
	for _, t := range old.Topics {
		if !topics[t.ARN] {
			c.PutTopics = append(c.PutTopics, t)
		}
	}
	for _, sub := range old.Subscriptions {
		if !subs[sub.ARN] {
			c.PutSubscriptions = append(c.PutSubscriptions, sub)
		}
	}
	for _, sub := range old.Unsubscribed {
		if !tombs[sub.Token] {
			c.PutUnsubscribed = append(c.PutUnsubscribed, sub)
		}
	}
	if err := putRegistry(b, c); err != nil {
		return n, err
	}
	n.topics, n.subs = len(c.PutTopics), len(c.PutSubscriptions)

	key, err := os.ReadFile(filepath.Join(dir, legacyKeyFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return n, err
	default:
		if _, err := parseSigner(key); err != nil {
			return n, fmt.Errorf("%s: %w", legacyKeyFile, err)
		}
		cur, err := kv.SigningKey()
		if err != nil {
			return n, err
		}
		if cur == nil {
			b.Set([]byte(keySigning), key)
			n.key = true
		} else if string(cur) != string(key) {
			log.Warn("sns: the store has a signing key already; the one in " + legacyKeyFile + " is not imported")
		}
	}

	path := filepath.Join(dir, LegacyOutboxDir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return n, nil
	} else if err != nil {
		return n, err
	}
	outbox, err := openOutbox(path)
	if err != nil {
		return n, fmt.Errorf("open the outbox: %w", err)
	}
	defer outbox.Close()
	w, err := readLegacyOutbox(outbox)
	if err != nil {
		return n, err
	}
	after, err := kv.maxRecordID()
	if err != nil {
		return n, err
	}
	for i := range w.Publishes {
		w.Publishes[i].ID += after
	}
	putOutbox(b, w)
	n.publishes = len(w.Publishes)
	return n, nil
}

// readLegacyState reads sns-topics.json; a missing file holds nothing.
func readLegacyState(path string) (Registrations, error) {
	var r Registrations
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return r, nil
}

// readLegacyOutbox reads an outbox store of the releases before the one
// store: the records that have deliveries left, with them, and the
// deduplication entries, those of the first release's layout too.
func readLegacyOutbox(outbox storage.Store) (OutboxWrite, error) {
	var w OutboxWrite
	recs := map[uint64]*OutboxEntry{}
	var ids []uint64
	err := outbox.Scan([]byte{'m'}, func(k, v []byte) error {
		if len(k) != 9 {
			return fmt.Errorf("outbox: bad record key %x", k)
		}
		id := binary.BigEndian.Uint64(k[1:])
		recs[id] = &OutboxEntry{ID: id, Record: append([]byte(nil), v...)}
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return w, err
	}
	err = outbox.Scan([]byte{'d'}, func(k, v []byte) error {
		if len(k) != 13 {
			return fmt.Errorf("outbox: bad delivery key %x", k)
		}
		if r, ok := recs[binary.BigEndian.Uint64(k[1:])]; ok {
			r.Deliveries = append(r.Deliveries, OutboxDelivery{Index: binary.BigEndian.Uint32(k[9:]), Subscription: string(v)})
		}
		return nil
	})
	if err != nil {
		return w, err
	}
	for _, id := range ids { // in key order: oldest first
		if r := recs[id]; len(r.Deliveries) > 0 {
			w.Publishes = append(w.Publishes, *r)
		}
	}
	dedup := func(key string, v []byte) {
		var e DedupEntry
		if json.Unmarshal(v, &e) == nil {
			e.Key = key
			w.Dedup = append(w.Dedup, e)
		}
	}
	err = outbox.Scan([]byte{'y'}, func(k, v []byte) error {
		if len(k) >= 9 {
			dedup(string(k[9:]), v)
		}
		return nil
	})
	if err != nil {
		return w, err
	}
	err = outbox.Scan([]byte{'x'}, func(k, v []byte) error {
		dedup(string(k[1:]), v)
		return nil
	})
	return w, err
}

// imported reports whether the files of an older release were imported.
func (s kvState) imported() (bool, error) { return storage.Has(s.kv, []byte(keyImported)) }
