-- The size of each queue's messages, so that --max-queue-bytes can refuse
-- sends to a full queue (as the embedded engine does) and the snapshot
-- reports Bytes, at the cost of a counter, not a scan.
--
-- A message's size is SQS's: its body and its message attributes (name,
-- data type and value of each), as tidemq.MessageSize counts it.
-- tidemq_message_size computes it from the row's body and attrs (the JSON
-- of the attributes, as the broker writes it: {"name": {"DataType",
-- "StringValue", "BinaryValue" (base64)}}), and messages keeps it in a
-- generated column, so that every insert, whichever path wrote it (a send,
-- a move, a node of an older version during a rolling upgrade), has it,
-- and no write path can forget it. Adding the column computes it for the
-- rows already there (a rewrite of the table, under the lock of ALTER
-- TABLE: the backfill).
--
-- queue_depth gets a bytes column beside messages, kept by the same
-- statement triggers as the count (migrations/0007_queue_depth.sql): one
-- upsert per statement and queue, into the backend's shard.
CREATE FUNCTION tidemq_message_size(body text, attrs bytea) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT octet_length(body) + CASE WHEN attrs IS NULL THEN 0 ELSE coalesce((
		SELECT sum(octet_length(a.key) + coalesce(octet_length(a.value->>'DataType'), 0) +
			CASE WHEN a.value->>'DataType' LIKE 'Binary%'
				THEN coalesce(length(decode(a.value->>'BinaryValue', 'base64')), 0)
				ELSE coalesce(octet_length(a.value->>'StringValue'), 0) END)
		FROM jsonb_each(convert_from(attrs, 'UTF8')::jsonb) AS a), 0)::integer END
$$;

ALTER TABLE messages ADD COLUMN size integer NOT NULL GENERATED ALWAYS AS (tidemq_message_size(body, attrs)) STORED;

ALTER TABLE queue_depth ADD COLUMN bytes bigint NOT NULL DEFAULT 0;

-- As in 0007: writers of an older node wait from here to the commit, so
-- that nothing is inserted or deleted between the sum below and the new
-- triggers (the ALTER TABLE above holds a stronger lock already).
LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO queue_depth AS d (queue_id, shard, bytes)
SELECT queue_id, 0, sum(size) FROM messages GROUP BY queue_id
ON CONFLICT (queue_id, shard) DO UPDATE SET bytes = d.bytes + excluded.bytes;

CREATE OR REPLACE FUNCTION tidemq_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO queue_depth AS d (queue_id, shard, messages, dead_lettered, bytes)
	SELECT queue_id, pg_backend_pid() % 64, count(*), count(*) FILTER (WHERE dlq_source <> ''), sum(size)
	FROM inserted GROUP BY queue_id
	ON CONFLICT (queue_id, shard) DO UPDATE
	SET messages = d.messages + excluded.messages, dead_lettered = d.dead_lettered + excluded.dead_lettered,
		bytes = d.bytes + excluded.bytes;
	RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION tidemq_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	-- A queue being deleted takes its counters with it (ON DELETE
	-- CASCADE), so there is nothing to subtract from (the join skips it).
	INSERT INTO queue_depth AS d (queue_id, shard, messages, dead_lettered, bytes)
	SELECT x.queue_id, pg_backend_pid() % 64, -count(*), -count(*) FILTER (WHERE x.dlq_source <> ''), -sum(x.size)
	FROM deleted x JOIN queues q ON q.id = x.queue_id GROUP BY x.queue_id
	ON CONFLICT (queue_id, shard) DO UPDATE
	SET messages = d.messages + excluded.messages, dead_lettered = d.dead_lettered + excluded.dead_lettered,
		bytes = d.bytes + excluded.bytes;
	RETURN NULL;
END
$$;
