-- A key-value space for what tidemq keeps besides queues (storage.Store:
-- topics, subscriptions, the SNS outbox, triggers). Keys order as bytes.
CREATE TABLE kv (
	key   bytea PRIMARY KEY,
	value bytea NOT NULL
);
