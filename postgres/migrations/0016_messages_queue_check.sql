-- A message's queue is checked once per statement and queue, not once per
-- row: the foreign key messages.queue_id -> queues(id) goes.
--
-- The key checked every inserted row on its own: a trigger per row, each a
-- query that locks the queue's row FOR KEY SHARE, although a send's group
-- commit inserts tens of rows of one queue in one statement. Measured with
-- pgbench, one connection, 73-row inserts into this schema: the key was
-- about a fifth of an insert's time (docs/performance.md).
--
-- What the key did is done by what is already there, and two triggers:
--
-- - The check. Every insert into messages runs the statement trigger
--   tidemq_count_inserted (0007, 0013), which upserts a counter row of
--   queue_depth for each of the statement's queues, and queue_depth keeps
--   its own foreign key to queues (ON DELETE CASCADE). So an insert either
--   inserts a counter row, whose key check locks the queue's row FOR KEY
--   SHARE, or updates one and holds that row's lock. Either way a
--   DELETE of the queue waits for the insert's transaction: the first by
--   the queue row's lock, the second by the cascade that deletes the
--   counter rows. And an insert that comes after a DELETE finds no counter
--   row and no queue: it fails with the key's error (23503,
--   foreign_key_violation), which the write paths take for "deleted
--   meanwhile" as before (the group commit retries each request alone; a
--   send looks at a cached queue again).
-- - The cascade. Two triggers on queues delete a deleted queue's messages
--   in the same transaction, as ON DELETE CASCADE did. The first runs
--   before the keys' cascades, as the old cascade did: it waits for a
--   transaction that holds one of the queue's messages (a dead-letter
--   move, a delete) while the counter rows that transaction will update
--   are still there; deleting the counters first would deadlock with it.
--   The second runs after the
--   cascades of the keys (triggers fire in the order of their names), so
--   after the wait above; a trigger whose name sorted before theirs would
--   not wait (TestQueueDeleteAndInsertRace). Each statement of a PL/pgSQL
--   function takes a new snapshot, so messages committed by an insert that
--   the DELETE waited for are deleted too.
--
-- Nodes of the previous version, during a rolling upgrade, run their
-- inserts and DELETE FROM queues against the same triggers.
CREATE FUNCTION tidemq_delete_queue_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM messages WHERE queue_id = OLD.id;
	RETURN NULL;
END
$$;
CREATE TRIGGER "A_queues_delete_messages" AFTER DELETE ON queues
	FOR EACH ROW EXECUTE FUNCTION tidemq_delete_queue_messages();
CREATE TRIGGER queues_delete_messages AFTER DELETE ON queues
	FOR EACH ROW EXECUTE FUNCTION tidemq_delete_queue_messages();

ALTER TABLE messages DROP CONSTRAINT messages_queue_id_fkey;
