//go:build unix

package pebble

import (
	"syscall"
	"testing"
)

// TestWALIsNotPreallocated: a WAL takes on disk what is written to it and
// the fill, not the 70 MiB Pebble preallocates (110% of MemTableSize):
// every WAL the store keeps, live or kept to recycle, took that much.
func TestWALIsNotPreallocated(t *testing.T) {
	ws := tenCommits(t)
	for _, w := range ws {
		var st syscall.Stat_t
		if err := syscall.Stat(w, &st); err != nil {
			t.Fatal(err)
		}
		if used := st.Blocks * 512; used > 4*walFillAhead {
			t.Errorf("WAL %s takes %d bytes on disk after 10 small commits, want at most %d", w, used, 4*walFillAhead)
		}
	}
}
