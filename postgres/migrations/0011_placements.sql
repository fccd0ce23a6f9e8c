-- Queues placed on several PostgreSQL clusters (tidemq serve --queue-store,
-- package placement). Every database gets both; only the home database's
-- placements table is used.
--
-- This database's identity, which the home database's placements name:
-- a UUID made once, here, so that it survives a change of host, port or
-- password in the connection URL.
INSERT INTO meta (key, value) VALUES ('cluster_id', convert_to(gen_random_uuid()::text, 'UTF8'))
	ON CONFLICT (key) DO NOTHING;

-- Where each queue (by its name in the home region's namespace, as the
-- brokers name it) lives. A row is never deleted: a queue deleted and
-- created again comes back on the same cluster, where the queues whose
-- RedrivePolicy names it are.
CREATE TABLE placements (
	queue     text PRIMARY KEY,
	cluster   text NOT NULL,
	placed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX placements_cluster ON placements (cluster);
