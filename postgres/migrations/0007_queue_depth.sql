-- Depth counters, so that GetQueueAttributes and /metrics cost the same at
-- ten million messages as at ten. queue_depth holds, per queue, how many
-- messages it has and how many of them were dead-lettered into it, split
-- over shard rows that only add up: each row is written by one server
-- backend (shard = its pid modulo 64), so two transactions never wait for
-- each other's counter row, and a reader sums a queue's rows. Statement
-- triggers keep them in the transaction of every insert and delete of
-- messages (sends, deletes, moves, expiry, purge: no write path can
-- forget them), one upsert per statement and queue.
--
-- What depends on the clock (in flight, delayed) is not counted: a
-- message becomes visible by time passing, with no write. Those two are
-- counted from the receive indexes (messages_returned, messages_fresh:
-- the rows whose visible_at is still ahead), so a count costs what is in
-- flight or delayed, never the backlog; visible is the rest.
CREATE TABLE queue_depth (
	queue_id      bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
	shard         integer NOT NULL,
	messages      bigint NOT NULL DEFAULT 0,
	dead_lettered bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (queue_id, shard)
);

-- Writers of an older node still running (a rolling upgrade) wait from
-- here to the migration's commit: a message they inserted or deleted
-- between the count below and the triggers' creation would be in
-- neither, and the counters would be off for good.
LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO queue_depth (queue_id, shard, messages, dead_lettered)
SELECT queue_id, 0, count(*), count(*) FILTER (WHERE dlq_source <> '') FROM messages GROUP BY queue_id;

CREATE FUNCTION tidemq_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO queue_depth AS d (queue_id, shard, messages, dead_lettered)
	SELECT queue_id, pg_backend_pid() % 64, count(*), count(*) FILTER (WHERE dlq_source <> '')
	FROM inserted GROUP BY queue_id
	ON CONFLICT (queue_id, shard) DO UPDATE
	SET messages = d.messages + excluded.messages, dead_lettered = d.dead_lettered + excluded.dead_lettered;
	RETURN NULL;
END
$$;

CREATE FUNCTION tidemq_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	-- A queue being deleted takes its counters with it (ON DELETE
	-- CASCADE), so there is nothing to subtract from (the join skips it).
	INSERT INTO queue_depth AS d (queue_id, shard, messages, dead_lettered)
	SELECT x.queue_id, pg_backend_pid() % 64, -count(*), -count(*) FILTER (WHERE x.dlq_source <> '')
	FROM deleted x JOIN queues q ON q.id = x.queue_id GROUP BY x.queue_id
	ON CONFLICT (queue_id, shard) DO UPDATE
	SET messages = d.messages + excluded.messages, dead_lettered = d.dead_lettered + excluded.dead_lettered;
	RETURN NULL;
END
$$;

CREATE TRIGGER messages_count_inserted AFTER INSERT ON messages
	REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION tidemq_count_inserted();
CREATE TRIGGER messages_count_deleted AFTER DELETE ON messages
	REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION tidemq_count_deleted();
