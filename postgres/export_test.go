package postgres

import "time"

// SetQueueCacheTTL sets how long a node keeps a queue's row
// (queuecache.go) and returns a function that restores it. A test that
// sets it long shows that changes reach the caches by announcement, not
// by the entries running out.
func SetQueueCacheTTL(d time.Duration) (restore func()) {
	old := queueCacheTTL
	queueCacheTTL = d
	return func() { queueCacheTTL = old }
}

// SnapshotPageSQL is the statement of a page of SnapshotsAfter (a test
// EXPLAINs it).
const SnapshotPageSQL = snapshotPageSQL

// PageDeadLetterTargetsSQL is the statement that tells which of a page's
// queues are dead-letter targets (a test EXPLAINs it).
const PageDeadLetterTargetsSQL = pageDeadLetterTargetsSQL
