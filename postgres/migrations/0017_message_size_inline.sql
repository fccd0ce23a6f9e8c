-- tidemq_message_size (0013, 0014) as a SQL function of one expression,
-- which PostgreSQL inlines into the generated column size, so that a
-- message without attributes (most of them) costs no function call on
-- insert; the attributes' part stays in PL/pgSQL (tidemq_attrs_size, with
-- 0014's query), called only for a message that has some. Same result for
-- every row: the stored sizes do not change.
--
-- Measured with pgbench, one connection, 73-row inserts without
-- attributes: the PL/pgSQL call was about an eighth of an insert's time
-- (docs/performance.md).
CREATE FUNCTION tidemq_attrs_size(attrs bytea) RETURNS integer
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	RETURN coalesce((
		SELECT sum(octet_length(a.key) + coalesce(octet_length(a.value->>'DataType'), 0) +
			CASE WHEN a.value->>'DataType' LIKE 'Binary%'
				THEN coalesce(length(decode(a.value->>'BinaryValue', 'base64')), 0)
				ELSE coalesce(octet_length(a.value->>'StringValue'), 0) END)
		FROM jsonb_each(convert_from(attrs, 'UTF8')::jsonb) AS a), 0)::integer;
END
$$;

-- The body is SQL-standard (RETURN), which binds tidemq_attrs_size when
-- the function is created: a body in quotes would look the name up in the
-- search_path each time it is inlined, and pg_dump's restore, which runs
-- with an empty search_path, could not create messages.
CREATE OR REPLACE FUNCTION tidemq_message_size(body text, attrs bytea) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN octet_length(body) + CASE WHEN attrs IS NULL THEN 0 ELSE tidemq_attrs_size(attrs) END;
