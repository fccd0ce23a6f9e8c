package trigger

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/tidemq/tidemq/storage"
)

// The upgrade from the releases that kept the triggers in a file of their
// own, DATA_DIR/triggers.json for `tidemq serve`: {"Triggers": [Config,
// ...]}, the secrets of the targets included, written 0600.
//
// ImportFile copies the triggers into the store, in one durable batch with
// the "imported" mark, and then renames the file: the next start finds
// nothing to import. A crash between the batch and the rename leaves the
// mark, and the next start only renames the file.

// LegacyFile is the name of the file, in the data directory, that the
// releases before the one store kept the triggers in.
const LegacyFile = "triggers.json"

// legacyFileMode is the mode the releases before the one store wrote
// LegacyFile with: it holds the targets' secrets.
const legacyFileMode os.FileMode = 0o600

// legacyFile is LegacyFile's content.
type legacyFile struct {
	Triggers []*Config `json:"Triggers"`
}

// ImportFile imports into st the triggers that a release before the one
// store kept in the file at path, and then renames the file to
// path.imported (or path.imported-2, ...), which holds the targets' secrets
// and can be deleted once there is no going back. A file that does not
// exist is nothing to import; a file others may read is made 0600 first. st
// is not closed.
//
// What st already holds wins over the file: a trigger of the same name is
// not imported. The triggers are imported as they were, not checked
// against their queues again: the Manager starts them as it did when it
// loaded the file.
func ImportFile(st storage.Store, path string, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	tightenFileMode(path, log)
	reg := newKVRegistry(st)
	done, err := reg.imported()
	if err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	if done {
		to, err := storage.MoveAside(path)
		if err != nil {
			return fmt.Errorf("trigger: %w", err)
		}
		log.Warn("trigger: the triggers file was imported into the store before; it was moved aside unread",
			"file", path, "moved_to", to)
		return nil
	}
	b := reg.kv.NewBatch()
	n, skipped, err := importFile(reg, b, path)
	if err != nil {
		return fmt.Errorf("trigger: import %s: %w", path, err)
	}
	mark, _ := json.Marshal(map[string]any{"file": path, "triggers": n})
	b.Set([]byte(keyImported), mark)
	if err := storage.CommitSync(b); err != nil {
		return fmt.Errorf("trigger: import %s: %w", path, err)
	}
	if len(skipped) > 0 {
		log.Warn("trigger: the store has triggers of these names already; the file's are not imported", "triggers", skipped)
	}
	to, err := storage.MoveAside(path)
	if err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	log.Info("trigger: imported the triggers of an older release into the store", "triggers", n, "old_file_moved_to", to)
	return nil
}

// importFile adds the triggers of the file at path to b, except those
// whose name reg holds already (skipped), and returns how many it added.
func importFile(reg kvRegistry, b storage.Batch, path string) (n int, skipped []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	var f legacyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return 0, nil, err
	}
	have, err := reg.LoadTriggers()
	if err != nil {
		return 0, nil, err
	}
	names := make(map[string]bool, len(have))
	for _, c := range have {
		names[c.Name] = true
	}
	added := map[string]bool{}
	for _, c := range f.Triggers {
		switch {
		case c == nil:
			continue
		case names[c.Name]:
			skipped = append(skipped, c.Name)
			continue
		}
		// A name given twice: the last one wins, as it did when the file
		// was loaded.
		if err := putTrigger(b, c); err != nil {
			return 0, nil, err
		}
		added[c.Name] = true
	}
	return len(added), skipped, nil
}

// tightenFileMode makes a triggers file that others may read (written by
// hand, or restored from a backup) legacyFileMode, as the releases that
// wrote it did: it holds secrets, and stays on disk renamed.
func tightenFileMode(path string, log *slog.Logger) {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&^legacyFileMode == 0 {
		return
	}
	if err := os.Chmod(path, legacyFileMode); err != nil {
		log.Warn("the triggers file holds secrets but others may read it", "path", path, "mode", fi.Mode().Perm().String(), "err", err)
		return
	}
	log.Warn("the triggers file holds secrets: made it readable by the server's user only", "path", path, "was", fi.Mode().Perm().String())
}
