package sns

import "encoding/binary"

// Namespace begins every key the service writes in its store. In the one
// store of `tidemq serve` the engine's keys are beside it; the storage
// package comment lists the namespaces.
const Namespace = "sns/"

// Key layout under Namespace. This is the one place it is written down.
//
//	t/<topic ARN>                   topic (Topic, JSON)
//	s/<subscription ARN>            subscription (Subscription, JSON)
//	u/<token>                       HTTP/HTTPS subscription unsubscribed recently, kept until
//	                                its token expires so that the token can restore it (JSON)
//	key                             signing key and its certificate (PEM)
//	m/<id>                          outbox record: a publish with deliveries left (record, JSON)
//	d/<id><index>                   outbox delivery still to be done → subscription ARN
//	y/<expiry><dedup key>           FIFO deduplication entry (JSON: message id, sequence, expiry)
//	x/<dedup key>0<expiry>          the same entry, found by its key: how a node finds the
//	                                entries other nodes wrote (fifo.go)
//	f/<topic ARN>                   a FIFO topic's last sequence number (20 digits)
//	imported                        the files of an older release were imported (upgrade.go)
//
// <id> is 8 bytes big endian, numbered in publish order, so records sort
// oldest first; <index> 4 bytes big endian; <expiry> Unix milliseconds, 8
// bytes big endian; <dedup key> the topic ARN, a 0 byte, with
// FifoThroughputScope=MessageGroup the group and a 0 byte, and the
// deduplication id.
//
// A dedup entry's key holds its expiry, so that deleting an expired entry
// can never delete a newer entry for the same deduplication id: expiry
// runs across topics, and the batch deleting topic A's expired entry may
// commit after topic B's publish wrote a fresh one for the same id.
//
// Releases before the one store kept these in files of DATA_DIR/sns and
// the outbox in a Pebble store of its own at DATA_DIR/sns/outbox, with
// the outbox keys below without their "m/", "d/" and "y/" slashes ('m',
// 'd', 'y', and 'x' + dedup key for the first release's dedup entries);
// upgrade.go imports them.
const (
	prefixTopic        = "t/"
	prefixSubscription = "s/"
	prefixUnsubscribed = "u/"
	keySigning         = "key"
	prefixRecord       = "m/"
	prefixDelivery     = "d/"
	prefixDedup        = "y/"
	prefixDedupByKey   = "x/"
	prefixFIFOSequence = "f/"
	keyImported        = "imported"
)

func stringKey(prefix, s string) []byte { return append([]byte(prefix), s...) }

func recordKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prefixRecord), id)
}

func deliveryKey(id uint64, index uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64([]byte(prefixDelivery), id), index)
}

// dedupByKey is the x/ key of a dedup entry.
func dedupByKey(key string, expires int64) []byte {
	return binary.BigEndian.AppendUint64(append(append([]byte(prefixDedupByKey), key...), 0), uint64(expires))
}

func dedupStoreKey(key string, expires int64) []byte {
	return append(binary.BigEndian.AppendUint64([]byte(prefixDedup), uint64(expires)), key...)
}
