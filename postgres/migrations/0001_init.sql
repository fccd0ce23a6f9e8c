-- tidemq's PostgreSQL schema, version 1. Every instant is nanoseconds since
-- the Unix epoch, read from the broker's Clock (never the server's now()),
-- 0 meaning never.

CREATE TABLE meta (
	key   text PRIMARY KEY,
	value bytea NOT NULL
);

CREATE TABLE queues (
	id         bigserial PRIMARY KEY,
	name       text NOT NULL UNIQUE,
	fifo       boolean NOT NULL,
	attrs      jsonb NOT NULL,
	tags       jsonb NOT NULL DEFAULT '{}',
	created    bigint NOT NULL,
	modified   bigint NOT NULL,
	purged     bigint NOT NULL DEFAULT 0,
	-- the ARN its RedrivePolicy names ('' without one)
	dlq_target text NOT NULL DEFAULT ''
);
CREATE INDEX queues_dlq_target ON queues (dlq_target) WHERE dlq_target <> '';

-- One sequence for every queue: a message's seq orders it within its queue
-- and is its FIFO SequenceNumber.
CREATE SEQUENCE message_seq;

-- A message's state is derived from visible_at and receive_count at a
-- given now: visible_at <= now is receivable; otherwise in flight when it
-- was received (receive_count > 0), else delayed.
CREATE TABLE messages (
	queue_id      bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
	seq           bigint NOT NULL,
	message_id    text NOT NULL,
	body          text NOT NULL,
	attrs         bytea,
	sys_attrs     bytea,
	group_id      text NOT NULL DEFAULT '',
	dedup_id      text NOT NULL DEFAULT '',
	sender        text NOT NULL,
	sent_at       bigint NOT NULL,
	enqueued_at   bigint NOT NULL,
	visible_at    bigint NOT NULL,
	receive_count integer NOT NULL DEFAULT 0,
	first_receive bigint NOT NULL DEFAULT 0,
	received_at   bigint NOT NULL DEFAULT 0,
	dlq_source    text NOT NULL DEFAULT '',
	history       bytea,
	PRIMARY KEY (queue_id, seq)
);
-- Standard receives, the next deadline of a long poll, the counters.
CREATE INDEX messages_visible ON messages (queue_id, visible_at, seq);
-- Retention expiry, peek and the oldest message's age.
CREATE INDEX messages_age ON messages (queue_id, enqueued_at, seq);
-- FIFO receives: a group's messages in order, and its messages that are
-- not receivable (in flight or delayed).
CREATE INDEX messages_group ON messages (queue_id, group_id, seq) WHERE group_id <> '';
CREATE INDEX messages_group_visible ON messages (queue_id, group_id, visible_at) WHERE group_id <> '';

-- The FIFO deduplication window.
CREATE TABLE dedup (
	queue_id   bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
	key        text NOT NULL,
	message_id text NOT NULL,
	seq        bigint NOT NULL,
	expires    bigint NOT NULL,
	PRIMARY KEY (queue_id, key)
);
CREATE INDEX dedup_expires ON dedup (queue_id, expires);

-- FIFO receive attempts (ReceiveRequestAttemptId), for 5 minutes.
CREATE TABLE receive_attempts (
	queue_id   bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
	attempt_id text NOT NULL,
	expires    bigint NOT NULL,
	entries    jsonb NOT NULL,
	PRIMARY KEY (queue_id, attempt_id)
);
CREATE INDEX receive_attempts_expires ON receive_attempts (queue_id, expires);

CREATE TABLE move_tasks (
	id              text PRIMARY KEY,
	ord             bigserial,
	source_arn      text NOT NULL,
	destination_arn text NOT NULL DEFAULT '',
	rate            integer NOT NULL DEFAULT 0,
	moved           bigint NOT NULL DEFAULT 0,
	to_move         bigint NOT NULL DEFAULT 0,
	status          text NOT NULL,
	failure         text NOT NULL DEFAULT '',
	started         bigint NOT NULL
);
CREATE INDEX move_tasks_source ON move_tasks (source_arn, ord);
