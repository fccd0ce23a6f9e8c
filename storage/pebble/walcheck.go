package pebble

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/record"
	"github.com/cockroachdb/pebble/vfs"
)

// Why this file exists: Pebble (v1.1) replays the last write-ahead log up
// to its first record that fails its checksum (or is zeroed, or torn) and
// treats that record as the end of the log, silently: whatever follows it
// is dropped, and the database opens. That is right for a torn tail (a
// write the crash cut short was never acknowledged), but not for damage in
// the middle of the log: records after it were acknowledged, and dropping
// them loses sends and brings deletes back. (For the logs before the last,
// Pebble is strict and refuses to open.)
//
// So before Pebble opens the store, checkWAL reads the last log itself
// with Pebble's record reader. Where the reader stops on a bad record, it
// looks for a valid record of the same log further on (at each 32 KiB
// block boundary after the damage, as Pebble's own recovery does). None:
// the tail was torn, which is logged and left to Pebble. One: the store is
// refused with a CorruptWALError naming the log and the offset, unless
// the operator asked to truncate (Options.TruncateCorruptWAL), which is
// logged as an error with what is dropped.

// walBlockSize is the block size of Pebble's log format.
const walBlockSize = 32 << 10

// CorruptWALError is the refusal to open a store whose last write-ahead log
// has a bad record followed by valid ones.
type CorruptWALError struct {
	File    string // the log's path
	Offset  int64  // where the bad record starts
	ValidAt int64  // the 32 KiB block at which valid records are found again
	Reason  string // what the record reader said
}

func (e *CorruptWALError) Error() string {
	return fmt.Sprintf("write-ahead log %s is corrupt at offset %d (%s) and valid records follow it (from the block at offset %d): "+
		"opening it would silently drop acknowledged writes; restore a backup, or start with --truncate-corrupt-wal "+
		"to keep only the records before offset %d", e.File, e.Offset, e.Reason, e.ValidAt, e.Offset)
}

// walDamage is what checkWAL found wrong in a log; nil when the log ends
// cleanly.
type walDamage struct {
	file    string
	offset  int64 // where the bad record starts
	validAt int64 // the block where a valid record follows; -1: none (a torn tail)
	reason  error
	records int // valid records before offset
}

// checkWAL checks the last write-ahead log of the store in dir (see the
// comment at the top of this file) and logs what it finds. It returns a
// *CorruptWALError if a bad record has valid records after it and truncate
// is false.
func checkWAL(fs vfs.FS, dir string, truncate bool, log *slog.Logger) error {
	path, num, ok, err := lastWAL(fs, dir)
	if err != nil || !ok {
		return err
	}
	d, err := scanWAL(fs, path, num)
	if err != nil || d == nil {
		return err
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch {
	case d.validAt < 0:
		log.Warn("storage: the write-ahead log ends in an incomplete record (a write cut short by a crash, never acknowledged); recovering up to it",
			"wal", d.file, "offset", d.offset, "records", d.records, "reason", d.reason.Error())
		return nil
	case truncate:
		log.Error("storage: the write-ahead log is corrupt; --truncate-corrupt-wal drops every record after the damage",
			"wal", d.file, "offset", d.offset, "next_valid_offset", d.validAt, "records_kept", d.records, "reason", d.reason.Error())
		return nil
	}
	cerr := &CorruptWALError{File: d.file, Offset: d.offset, ValidAt: d.validAt, Reason: d.reason.Error()}
	log.Error("storage: the write-ahead log is corrupt; refusing to open the store",
		"wal", d.file, "offset", d.offset, "next_valid_offset", d.validAt, "reason", d.reason.Error())
	return cerr
}

// lastWAL finds the store's write-ahead log with the highest number: the
// one being written when the store last ran. Obsolete logs kept for
// recycling have lower numbers (a recycled log is renamed to a new number
// when reused).
func lastWAL(fs vfs.FS, dir string) (path string, num uint64, ok bool, err error) {
	names, err := fs.List(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", 0, false, nil
		}
		return "", 0, false, err
	}
	var nums []uint64
	for _, n := range names {
		base, found := strings.CutSuffix(n, ".log")
		if !found {
			continue
		}
		v, err := strconv.ParseUint(base, 10, 64)
		if err != nil {
			continue
		}
		nums = append(nums, v)
	}
	if len(nums) == 0 {
		return "", 0, false, nil
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	num = nums[len(nums)-1]
	return fs.PathJoin(dir, fmt.Sprintf("%06d.log", num)), num, true, nil
}

// scanWAL reads the log at path and describes its damage, nil if it ends
// cleanly (io.EOF: its end, its trailer, fill or a recycled file's stale
// tail).
func scanWAL(fs vfs.FS, path string, num uint64) (*walDamage, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	r := record.NewReader(f, pebble.FileNum(num))
	d := &walDamage{file: path, validAt: -1}
	for {
		d.offset = r.Offset()
		rec, err := r.Next()
		if err == nil {
			_, err = io.Copy(io.Discard, rec)
		}
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			if !record.IsInvalidRecord(err) {
				return nil, fmt.Errorf("read write-ahead log %s: %w", path, err)
			}
			d.reason = err
			break
		}
		d.records++
	}
	// Look for a valid record after the damage, from each block boundary
	// past the block where it starts.
	for b := (d.offset/walBlockSize + 1) * walBlockSize; b < size; b += walBlockSize {
		sr := io.NewSectionReader(f, b, size-b)
		r := record.NewReader(sr, pebble.FileNum(num))
		rec, err := r.Next()
		if err != nil {
			continue
		}
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, rec); err != nil || buf.Len() < batchHeaderLen {
			continue
		}
		d.validAt = b
		break
	}
	return d, nil
}

// batchHeaderLen is the size of a Pebble batch's header (sequence number
// and count): a shorter record is not a batch.
const batchHeaderLen = 12
