-- One SNS subscription per (topic, protocol, endpoint), enforced by the
-- database (issue 26): the topic service already finds the existing one
-- under its registry lock (postgres.KV.Update), and this index makes a
-- second one impossible whatever a node does. Subscriptions are the kv
-- rows under 'sns/s/' (sns/keys.go), their value the JSON of
-- sns.Subscription.
CREATE FUNCTION tidemq_sns_subscription_identity(v bytea) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT (j->>'TopicARN') || E'\n' || (j->>'Protocol') || E'\n' || (j->>'Endpoint')
	      FROM (SELECT convert_from(v, 'UTF8')::jsonb AS j) AS s $$;

-- Releases before this one could make duplicates (two nodes subscribing
-- the same endpoint at once): keep the first of each, as a later
-- Subscribe would have answered.
DELETE FROM kv AS dup USING kv AS keep
WHERE dup.key >= 'sns/s/'::bytea AND dup.key < 'sns/s0'::bytea
  AND keep.key >= 'sns/s/'::bytea AND keep.key < 'sns/s0'::bytea
  AND keep.key < dup.key
  AND tidemq_sns_subscription_identity(keep.value) = tidemq_sns_subscription_identity(dup.value);

CREATE UNIQUE INDEX kv_sns_subscription_identity ON kv (tidemq_sns_subscription_identity(value))
	WHERE key >= 'sns/s/'::bytea AND key < 'sns/s0'::bytea;
