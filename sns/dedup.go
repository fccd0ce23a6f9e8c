package sns

import "time"

// DedupWindow is how long a FIFO topic remembers a deduplication id.
const DedupWindow = 5 * time.Minute

// dedupCache is the FIFO topics' deduplication memory: a publish whose
// deduplication id (the given one, or the SHA-256 of the body with
// ContentBasedDeduplication) was accepted within DedupWindow is answered
// with the first publish's MessageId and SequenceNumber and delivered to no
// one. The scope is the topic, or the message group with
// FifoThroughputScope=MessageGroup (as the Publish API reference says).
//
// Entries expire in the order they were added (the window is constant), so
// expiry pops from the head of a queue: O(1) per entry, no scan. Entries
// are also written to the Outbox in the publish's own write (no extra
// fsync) and reloaded at Open, so a restart does not forget them.
// The cache is guarded by the service's dedupMu; FIFO publishes of one
// topic are serialized by the topic lock, which is taken first.
type dedupCache struct {
	byKey map[string]DedupEntry
	order []dedupItem // oldest first; head is the first live item
	head  int
}

type dedupItem struct {
	key     string
	expires int64
}

func newDedupCache() *dedupCache { return &dedupCache{byKey: map[string]DedupEntry{}} }

// dedupKey is the cache (and Outbox) key of a deduplication id.
func dedupKey(t *Topic, groupID, dedupID string) string {
	k := t.ARN + "\x00"
	if t.Attributes["FifoThroughputScope"] == "MessageGroup" {
		k += groupID + "\x00"
	}
	return k + dedupID
}

// lookup returns the live entry of key.
func (c *dedupCache) lookup(key string, nowMs int64) (DedupEntry, bool) {
	e, ok := c.byKey[key]
	if !ok || e.Expires <= nowMs {
		return DedupEntry{}, false
	}
	return e, true
}

// add remembers e.
func (c *dedupCache) add(e DedupEntry) {
	c.byKey[e.Key] = e
	c.order = append(c.order, dedupItem{e.Key, e.Expires})
}

// expire forgets the entries that expired by nowMs and returns them, to be
// deleted from the Outbox.
func (c *dedupCache) expire(nowMs int64) []dedupItem {
	var gone []dedupItem
	for c.head < len(c.order) && c.order[c.head].expires <= nowMs {
		it := c.order[c.head]
		c.order[c.head] = dedupItem{}
		c.head++
		if e, ok := c.byKey[it.key]; ok && e.Expires == it.expires {
			delete(c.byKey, it.key)
		}
		gone = append(gone, it)
	}
	if c.head > 1024 && c.head*2 > len(c.order) { // compact the queue
		c.order = append([]dedupItem(nil), c.order[c.head:]...)
		c.head = 0
	}
	return gone
}
