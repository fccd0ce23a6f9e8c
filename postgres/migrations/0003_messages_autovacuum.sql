-- A queue table churns: every message is inserted, updated by each of its
-- receives (never a HOT update: a receive sets visible_at, which is
-- indexed) and deleted, and the dead versions left at the head of the
-- visibility index slow the receives that walk past them. Vacuum it after
-- 1% of its rows changed (the default waits for 20%), without the cost
-- delay, and after 1% inserted (which keeps its visibility map set).
ALTER TABLE messages SET (
	autovacuum_vacuum_scale_factor = 0.01,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_insert_scale_factor = 0.01,
	autovacuum_vacuum_cost_delay = 0,
	autovacuum_analyze_scale_factor = 0.05
);
