-- tidemq_message_size (0013_queue_bytes.sql) in PL/pgSQL, same result.
--
-- The generated column size calls it on every insert into messages. As a
-- SQL function whose body holds a subquery it cannot be inlined, so
-- PostgreSQL plans its body again in every statement that calls it: on
-- a single-row insert, a send, that planning is most of the function's
-- cost. A PL/pgSQL function keeps its plans for the session, and skips
-- the attributes' query when a message has none. Measured with pgbench
-- alone (bench/pgbench-size.sh, docs/performance.md). Replacing the
-- function changes no stored size: the result is the same for every row.
CREATE OR REPLACE FUNCTION tidemq_message_size(body text, attrs bytea) RETURNS integer
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	IF attrs IS NULL THEN
		RETURN octet_length(body);
	END IF;
	RETURN octet_length(body) + coalesce((
		SELECT sum(octet_length(a.key) + coalesce(octet_length(a.value->>'DataType'), 0) +
			CASE WHEN a.value->>'DataType' LIKE 'Binary%'
				THEN coalesce(length(decode(a.value->>'BinaryValue', 'base64')), 0)
				ELSE coalesce(octet_length(a.value->>'StringValue'), 0) END)
		FROM jsonb_each(convert_from(attrs, 'UTF8')::jsonb) AS a), 0)::integer;
END
$$;
