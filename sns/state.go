package sns

// What the service keeps durably, behind three small interfaces: the
// Registry of topics and subscriptions, the Outbox of publishes not yet
// fully delivered (with the FIFO deduplication entries), and the KeyStore
// of the signing key. The service keeps what it answers from in memory
// and writes through them; every write returns only once it is durable,
// so that nothing is acknowledged before. One implementation keeps all
// three in a storage.Store (kvstate.go, keys.go): `tidemq serve` gives the
// service the one store it shares with the engine.

// Registry keeps topics, subscriptions and unsubscribe tombstones.
type Registry interface {
	// LoadRegistry returns everything the registry holds.
	LoadRegistry() (Registrations, error)
	// UpdateRegistry runs fn against the registry as it is now (not as
	// some node cached it), exclusively of every other UpdateRegistry on
	// every node sharing the registry, and applies the change fn returns
	// atomically (deletes before puts), returning once it is durable. When
	// fn fails nothing changes and its error is returned. It does not keep
	// or modify the values.
	UpdateRegistry(fn func(RegistryView) (RegistryChange, error)) error
}

// RegistryView is what UpdateRegistry's function reads: the registry's
// current state. Each getter returns nil when there is no such entry.
type RegistryView interface {
	Topic(arn string) (*Topic, error)
	Subscription(arn string) (*Subscription, error)
	// Subscriptions returns a topic's subscriptions, ordered by ARN.
	Subscriptions(topicARN string) ([]*Subscription, error)
	Unsubscribed(token string) (*Subscription, error)
}

// Registrations is what a Registry holds.
type Registrations struct {
	Topics        []*Topic
	Subscriptions []*Subscription
	// Unsubscribed are HTTP/HTTPS subscriptions deleted recently, kept
	// until their token expires so that the UnsubscribeConfirmation's
	// SubscribeURL can restore them.
	Unsubscribed []*Subscription `json:",omitempty"`
}

// RegistryChange is one change of a Registry. A put replaces what has the
// same ARN (a tombstone: the same Token); deleting what is missing does
// nothing.
type RegistryChange struct {
	PutTopics           []*Topic
	DeleteTopics        []string // ARNs
	PutSubscriptions    []*Subscription
	DeleteSubscriptions []string // ARNs
	PutUnsubscribed     []*Subscription
	DeleteUnsubscribed  []string // tokens
}

// Outbox keeps every publish until its last delivery is done, and the
// FIFO topics' deduplication entries until they expire. outbox.go says
// how the service uses it and why a crash loses no fan-out.
type Outbox interface {
	// PutOutbox records publishes and deduplication entries and deletes
	// expired entries, atomically, and returns once that is durable.
	PutOutbox(OutboxWrite) error
	// DeliveryDone forgets the deliveries indexes of publish id, and the
	// publish with them when last is true, and returns once that is
	// durable.
	DeliveryDone(id uint64, indexes []uint32, last bool) error
	// LoadOutbox returns the publishes with deliveries left, oldest first,
	// and the deduplication entries that expire after nowMs, in expiry
	// order; it drops what is left of the others.
	LoadOutbox(nowMs int64) ([]OutboxEntry, []DedupEntry, error)

	// What keeps a FIFO topic's deduplication and order across the nodes
	// sharing the Outbox (fifo.go). LockFIFO holds the topic's lock
	// across the nodes (nothing more on a store one process owns) until
	// unlock is called; FindDedup returns the entry of key that expires
	// after nowMs, whichever node wrote it; LastSequence returns the last
	// sequence number given to a publish of the topic, or "".
	LockFIFO(topicARN string) (unlock func(), err error)
	FindDedup(key string, nowMs int64) (DedupEntry, bool, error)
	LastSequence(topicARN string) (string, error)
}

// OutboxWrite is one atomic write of an Outbox.
type OutboxWrite struct {
	Publishes []OutboxEntry
	Dedup     []DedupEntry
	// Expired are deduplication entries to delete: an entry is deleted
	// only if both its Key and its Expires match, so that deleting an
	// expired entry never deletes a fresh one for the same id.
	Expired []DedupEntry
	// Sequences are FIFO topics' last sequence numbers, by topic ARN.
	Sequences map[string]string
}

// OutboxEntry is a publish in an Outbox.
type OutboxEntry struct {
	ID         uint64 // increasing in publish order
	Record     []byte // the publish, as the service encodes it
	Deliveries []OutboxDelivery
}

// OutboxDelivery is one subscription's share of a publish, still to be
// done.
type OutboxDelivery struct {
	Index        uint32
	Subscription string // ARN
}

// DedupEntry says that a FIFO publish was accepted with a deduplication
// id, and with which MessageId and SequenceNumber, until Expires.
type DedupEntry struct {
	Key       string `json:"-"` // topic ARN, 0, [group, 0,] deduplication id
	MessageID string `json:"m"`
	Sequence  string `json:"s"`
	Expires   int64  `json:"e"` // Unix milliseconds
}

// KeyStore keeps the key that signs notifications.
type KeyStore interface {
	// SigningKey returns the stored key and certificate (PEM), or nil.
	SigningKey() ([]byte, error)
	// StoreSigningKey stores key unless a key is stored already, and
	// returns the stored one once it is durable: callers racing to create
	// the key all end up with the same.
	StoreSigningKey(key []byte) ([]byte, error)
}
