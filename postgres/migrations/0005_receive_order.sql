-- A standard queue serves a message that comes back from in flight (its
-- visibility timeout ran out, or was set to 0) before the messages that
-- were never received, as SQS and the embedded engine do; each kind in the
-- order it became receivable. Two partial indexes, one per kind, replace
-- messages_visible: a receive takes the first rows of the first and then,
-- if it needs more, of the second, each an index range scan that stops
-- after the rows it takes. A receive moves a row from the second to the
-- first (it sets receive_count), which it rewrites anyway.
CREATE INDEX messages_returned ON messages (queue_id, visible_at, seq) WHERE receive_count > 0;
CREATE INDEX messages_fresh ON messages (queue_id, visible_at, seq) WHERE receive_count = 0;
DROP INDEX messages_visible;
