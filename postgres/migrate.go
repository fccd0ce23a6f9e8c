package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The schema is a series of numbered SQL files (migrations/NNNN_name.sql),
// applied in order, each in its own transaction, and recorded in
// schema_migrations. A released migration is never edited: a change is a
// new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	paths, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, p := range paths {
		base := strings.TrimPrefix(p, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", base)
		}
		b, err := migrationFiles.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate brings the schema of the connection's search_path up to date.
// It runs under a transaction-scoped advisory lock keyed by the schema, so
// that several nodes starting at once apply each migration exactly once.
func migrate(ctx context.Context, pool *pgxpool.Pool) error { return migrateTo(ctx, pool, 0) }

// migrateTo is migrate up to version upTo (0: every version); a test of a
// migration starts from the schema before it.
func migrateTo(ctx context.Context, pool *pgxpool.Pool, upTo int) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('tidemq-migrate:' || current_schema()))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		applied := map[int]bool{}
		rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				return err
			}
			applied[v] = true
		}
		if err := rows.Err(); err != nil {
			return err
		}
		latest := 0
		for v := range applied {
			latest = max(latest, v)
		}
		if n := ms[len(ms)-1].version; latest > n {
			return fmt.Errorf("the database schema is at version %d, newer than this tidemq knows (%d): upgrade tidemq", latest, n)
		}
		for _, m := range ms {
			if applied[m.version] || (upTo > 0 && m.version > upTo) {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
}
