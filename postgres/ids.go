package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// RecordIDs numbers SNS outbox records (sns.Options.RecordIDs) from a
// sequence (migrations/0004_leases.sql): unique across the nodes, and
// increasing in the order the numbers are taken.
func RecordIDs(pool *pgxpool.Pool) func() (uint64, error) {
	return func() (uint64, error) {
		var id int64
		if err := pool.QueryRow(context.Background(), `SELECT nextval('sns_record_ids')`).Scan(&id); err != nil {
			return 0, fmt.Errorf("postgres: number an outbox record: %w", err)
		}
		return uint64(id), nil
	}
}
