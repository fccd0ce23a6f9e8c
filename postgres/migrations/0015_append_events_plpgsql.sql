-- tidemq_append_events (0006_receive_writes.sql) in PL/pgSQL, same result.
--
-- Every receive calls it once per message it receives. As a SQL function
-- whose body holds a subquery it cannot be inlined, so PostgreSQL plans
-- its body again in every receive statement, though the subquery runs only
-- once a message's history reaches its bound. A PL/pgSQL function keeps
-- its plans for the session and evaluates the common case (the history
-- not yet at its bound: an append) without a query. Replacing the function
-- changes no stored history: the result is the same for every input, and
-- a node still running 0014's schema calls it by the same signature.
CREATE OR REPLACE FUNCTION tidemq_append_events(events jsonb, add jsonb, bound integer) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
	n integer;
BEGIN
	IF events IS NULL THEN
		RETURN add;
	END IF;
	n := jsonb_array_length(events) + jsonb_array_length(add);
	IF n <= bound THEN
		RETURN events || add;
	END IF;
	RETURN (SELECT jsonb_agg(x ORDER BY i) FROM jsonb_array_elements(events || add) WITH ORDINALITY AS a(x, i)
		WHERE i = 1 OR i > n - bound + 1);
END
$$;
