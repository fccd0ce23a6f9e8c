package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// MoveAside renames path, a file or directory an older release kept outside
// the store and that has been imported into it, to the first of
// path.imported, path.imported-2, ... that does not exist, durably (the next
// start must not import it again), and returns the new name.
func MoveAside(path string) (string, error) {
	for i := 1; ; i++ {
		to := path + ".imported"
		if i > 1 {
			to += "-" + strconv.Itoa(i)
		}
		if _, err := os.Lstat(to); err == nil {
			continue
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if err := os.Rename(path, to); err != nil {
			return "", fmt.Errorf("move the imported %s aside: %w", path, err)
		}
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			_ = d.Sync()
			d.Close()
		}
		return to, nil
	}
}
