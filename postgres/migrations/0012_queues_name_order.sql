-- The queues in byte order of their names, as GET /tidemq/queues pages
-- them (Broker.SnapshotsAfter: WHERE name COLLATE "C" > $1 ORDER BY name
-- COLLATE "C" LIMIT n): a page reads its queues through this index, not
-- every queue. The UNIQUE index on name sorts in the database's collation,
-- which need not be byte order.
CREATE INDEX queues_name_order ON queues (name COLLATE "C");
