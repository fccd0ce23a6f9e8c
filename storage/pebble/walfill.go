package pebble

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/vfs"
)

// walFillFS is the operating system's file system, except that Pebble's
// write-ahead logs are kept written a little ahead of their writer.
//
// Why: fdatasync of blocks that were written before only flushes their
// data, but fdatasync of new blocks must also commit the file's new size
// and extents to the journal. On ext4 that doubles the latency of an
// fsync, and every durable answer waits for one (here, a 4 KiB write and
// sync: about 90 µs into written blocks, 200 µs appended). Pebble itself
// recycles obsolete WAL files for this reason, but it has none to recycle
// until it has flushed memtables, and a recycled file is only written as
// far as its last use. With the fill ahead, the metadata is committed once
// per ahead bytes instead of once per fsync.
//
// What the fill is, and why it is safe: Pebble writes a WAL sequentially
// from its start. Its reader, at a record boundary, treats a chunk header
// of the recyclable format that names another log number as the end of the
// log: that is how a recycled file's stale tail ends it. The fill is the
// byte fillByte repeated, which reads as such a header (type fillByte, log
// number 0x05050505), so the log ends where its writer stopped, as a log
// without the fill ends at the end of its file. Pebble writes an
// end-of-file trailer when it closes a log, and is lenient about the tail
// of the last log; the fill matters only for a log that is not the last
// and lost its trailer (a disk that acknowledged an fsync it had not
// done). There it ends the log cleanly, except when the writer stopped 7
// to 10 bytes before the end of a 32 KiB block, or the log number is
// 0x05050505: then Pebble sees a torn chunk and refuses to open, as it
// would on a recycled file's stale tail. (Zeros would be refused wherever
// the writer stopped: Pebble treats a zeroed chunk as the end of the last
// log only.)
type walFillFS struct {
	vfs.FS
	ahead int64  // bytes of fill kept written past the writer
	dir   string // the store's directory: only its WALs are filled ("": any)
}

// Create creates the file; a WAL is filled ahead of its writer.
func (fs walFillFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil || !isStoreWAL(fs.dir, name) {
		return f, err
	}
	return &filledFile{File: f, ahead: fs.ahead}, nil
}

// ReuseForWrite reuses an obsolete WAL, which is written as far as its
// size, and fills ahead from there.
func (fs walFillFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	if err != nil || !isStoreWAL(fs.dir, newname) {
		return f, err
	}
	var filled int64
	if st, err := f.Stat(); err == nil {
		filled = st.Size()
	}
	return &filledFile{File: f, ahead: fs.ahead, filled: filled}, nil
}

// filledFile keeps ahead bytes of fill written past its writer's offset.
// Pebble's log writer is its only writer, from one goroutine.
type filledFile struct {
	vfs.File
	ahead       int64
	off, filled int64
	failed      bool // a fill failed: write without filling from then on
}

func (f *filledFile) Write(p []byte) (int, error) {
	if end := f.off + int64(len(p)); end > f.filled && !f.failed {
		f.fill(end + f.ahead)
	}
	n, err := f.File.Write(p)
	f.off += int64(n)
	return n, err
}

// Preallocate does nothing while the fill works: the fill already
// writes the blocks ahead of the writer, and Pebble's preallocation
// (fallocate of 110% of MemTableSize, 70 MiB, per WAL) only reserved disk
// that the log rarely reaches, in the live log and in each of the logs it
// keeps to recycle: 280 MiB on disk for a store holding a few megabytes
// (issue 25). A file whose fill failed preallocates as Pebble asks.
func (f *filledFile) Preallocate(off, n int64) error {
	if f.failed {
		return f.File.Preallocate(off, n)
	}
	return nil
}

// fill writes fillBlock from the filled mark up to to. Filling is only an
// optimisation: if it fails, the log is written as it would be without.
func (f *filledFile) fill(to int64) {
	for f.filled < to {
		n := min(int64(len(fillBlock)), to-f.filled)
		if _, err := f.File.WriteAt(fillBlock[:n], f.filled); err != nil {
			f.failed = true
			return
		}
		f.filled += n
	}
}

// fillByte is Pebble's recyclable full-chunk type (record.recyclableFullChunkType).
const fillByte = 5

var fillBlock = bytes.Repeat([]byte{fillByte}, 64<<10)

// isWAL reports whether name is one of Pebble's write-ahead logs
// (NNNNNN.log).
// isStoreWAL reports whether name is a write-ahead log of the store in
// dir (any directory when dir is ""): a checkpoint copies the store's WALs
// into another directory through the same file system, and those copies
// are neither filled nor watched (a failure writing a backup must not
// stop the store).
func isStoreWAL(dir, name string) bool {
	return isWAL(name) && (dir == "" || filepath.Clean(filepath.Dir(name)) == filepath.Clean(dir))
}

func isWAL(name string) bool {
	num, ok := strings.CutSuffix(filepath.Base(name), ".log")
	if !ok || num == "" {
		return false
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
