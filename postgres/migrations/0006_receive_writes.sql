-- A receive writes only what it changes: the receive count, the times, the
-- visibility deadline, and one or two events appended to events, a jsonb
-- array of compact events ({"t": nanoseconds, "k": kind, "q": queue, "c":
-- client, "d": detail}) kept after the history blob. history keeps the
-- events written before this version and the ones a whole-row write
-- (a visibility change, a move) folds in; a reader shows history then
-- events. held is true while the message is in flight under a receive
-- whose end is not in its story yet: the first write that finds its
-- deadline passed appends the visibility-expired event (at the deadline)
-- and clears it.
ALTER TABLE messages ADD COLUMN events jsonb, ADD COLUMN held boolean NOT NULL DEFAULT false;

-- tidemq_append_events appends the events add to events, keeping at most
-- bound: the first event and the latest ones (tidemq.AppendHistory).
CREATE FUNCTION tidemq_append_events(events jsonb, add jsonb, bound integer) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
		WHEN events IS NULL THEN add
		WHEN jsonb_array_length(events) + jsonb_array_length(add) <= bound THEN events || add
		ELSE (SELECT jsonb_agg(x ORDER BY i) FROM jsonb_array_elements(events || add) WITH ORDINALITY AS a(x, i)
			WHERE i = 1 OR i > jsonb_array_length(events) + jsonb_array_length(add) - bound + 1)
	END
$$;
