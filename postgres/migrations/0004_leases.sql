-- Leases (lease.go): which node runs what must run once. expires is
-- nanoseconds since the epoch on the holders' Clock, never the server's
-- now(); generation grows each time the lease changes holder (a fencing
-- token).
CREATE TABLE leases (
	name       text PRIMARY KEY,
	holder     text NOT NULL,
	expires    bigint NOT NULL,
	generation bigint NOT NULL
);

-- The ids of SNS outbox records (sns.Options.RecordIDs): unique and in
-- publish order across every node.
CREATE SEQUENCE sns_record_ids;
