package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// A node's tables can vanish under it: the database dropped and created
// again, or the schema dropped (a restore gone wrong, a test cleanup
// pointed at the wrong place). The pool reconnects and the LISTEN
// connection too, so a ping succeeds while every call fails with
// `relation "queues" does not exist`. Healthy therefore reads the
// migrations table as well, and when it is gone runs the migrations again,
// as a node does at start (under the same advisory lock, so that the
// nodes probing at once create the schema once), and puts back the
// receipt-handle key this node holds (every node holds the same one, so
// whichever puts it first, handles stay valid on every node). Until that
// succeeds the node is unhealthy (503).

// checkSchema returns nil when the node's schema is in place, re-creating
// it first when it is missing.
func (b *Broker) checkSchema(ctx context.Context) error {
	var version int
	err := b.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&version)
	if err == nil {
		if version == 0 {
			err = errors.New("schema_migrations is empty")
		} else {
			return nil
		}
	} else if !undefinedTable(err) {
		return fmt.Errorf("postgres: read the schema version: %w", err)
	}
	b.log.Error("postgres: this node's tables are gone (the database or schema was dropped?): creating them again", "err", err)
	if err := migrate(ctx, b.pool); err != nil {
		return fmt.Errorf("postgres: the schema is missing and could not be created again: %w", err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO meta (key, value) VALUES ('handle_key', $1) ON CONFLICT (key) DO NOTHING`, b.handleKey); err != nil {
		return fmt.Errorf("postgres: the schema was created again, but not its receipt handle key: %w", err)
	}
	b.log.Warn("postgres: the schema was created again; what the dropped one held is lost")
	return nil
}

// undefinedTable reports whether err is PostgreSQL's "relation does not
// exist".
func undefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}
