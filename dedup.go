package tidemq

import (
	"crypto/sha256"
	"encoding/hex"
)

// DeduplicationID is the MessageDeduplicationId a FIFO message is known by:
// the one it was sent with, or, when it was sent without one (the queue has
// ContentBasedDeduplication), the hex SHA-256 of its body.
func DeduplicationID(given, body string) string {
	if given != "" {
		return given
	}
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// DedupKey is the key under which a FIFO message is remembered in its
// queue's five-minute deduplication window. With DeduplicationScope
// messageGroup (s.GroupDedup) the same deduplication id in two groups names
// two messages, so the key is the group and the id joined by a space: a
// MessageGroupId and a MessageDeduplicationId are tokens that cannot hold
// one (ValidateFIFOToken), so no two pairs share a key. With the default scope
// (queue) the key is the id alone. Both brokers key their windows by it;
// the space (not a NUL) because PostgreSQL text cannot hold a NUL.
func (s QueueSettings) DedupKey(group, dedupID string) string {
	if s.GroupDedup {
		return group + " " + dedupID
	}
	return dedupID
}
