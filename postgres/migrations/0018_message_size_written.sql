-- A message's size (0013) is written by the node that inserts the row
-- (tidemq.MessageSize, the same count), no longer computed by PostgreSQL
-- in a generated column, so that an insert does not evaluate the
-- expression for every row (a small gain in pgbench's 10-row inserts, up
-- to 1.19x: docs/performance.md, stop 44). DROP EXPRESSION keeps every
-- stored value and rewrites nothing.
--
-- A node of an older version, still running during a rolling upgrade,
-- inserts rows without the column: they hold NULL, and the counters'
-- triggers count such a row's size as the column did
-- (tidemq_message_size), on insert and on delete alike, so queue_depth's
-- bytes stay exact whichever node wrote a row. So the column stays
-- nullable; a later migration, once no node older than this one can be
-- running, may fill the NULLs (UPDATE ... SET size = tidemq_message_size(
-- body, attrs) WHERE size IS NULL) and set it NOT NULL again. Until then
-- a sum of the column is a sum of coalesce(size, tidemq_message_size(body,
-- attrs)), as the triggers' are.
ALTER TABLE messages ALTER COLUMN size DROP EXPRESSION, ALTER COLUMN size DROP NOT NULL;

CREATE OR REPLACE FUNCTION tidemq_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO queue_depth AS d (queue_id, shard, messages, dead_lettered, bytes)
	SELECT queue_id, pg_backend_pid() % 64, count(*), count(*) FILTER (WHERE dlq_source <> ''),
		sum(coalesce(size, tidemq_message_size(body, attrs)))
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
	SELECT x.queue_id, pg_backend_pid() % 64, -count(*), -count(*) FILTER (WHERE x.dlq_source <> ''),
		-sum(coalesce(x.size, tidemq_message_size(x.body, x.attrs)))
	FROM deleted x JOIN queues q ON q.id = x.queue_id GROUP BY x.queue_id
	ON CONFLICT (queue_id, shard) DO UPDATE
	SET messages = d.messages + excluded.messages, dead_lettered = d.dead_lettered + excluded.dead_lettered,
		bytes = d.bytes + excluded.bytes;
	RETURN NULL;
END
$$;
