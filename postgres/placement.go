package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Placements is the placement table of queues over several PostgreSQL
// clusters (package placement routes requests by it), kept in the home
// database. Each cluster is named by its ClusterID. Invariant: a queue
// name has at most one row and a row never changes nor goes away (there
// is no migration yet), so a node may cache a row for good; two nodes
// placing one name at once both get the first one's cluster.
type Placements struct {
	pool *pgxpool.Pool
}

// Placements returns the placement table in b's database.
func (b *Broker) Placements() *Placements { return &Placements{pool: b.pool} }

// ClusterID is this database's identity among the clusters queues are
// placed on: a UUID made by its migration (0011), the same for every node
// and whatever URL reaches it.
func (b *Broker) ClusterID(ctx context.Context) (string, error) {
	var id []byte
	err := b.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key = 'cluster_id'`).Scan(&id)
	return string(id), err
}

// Lookup returns the cluster queue is placed on; ok is false when it has
// no placement.
func (p *Placements) Lookup(ctx context.Context, queue string) (cluster string, ok bool, err error) {
	err = p.pool.QueryRow(ctx, `SELECT cluster FROM placements WHERE queue = $1`, queue).Scan(&cluster)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return cluster, err == nil, err
}

// Place places queue on cluster unless it has a placement already, and
// returns where it is placed (the first placement wins).
func (p *Placements) Place(ctx context.Context, queue, cluster string) (string, error) {
	var placed string
	err := p.pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO placements (queue, cluster) VALUES ($1, $2) ON CONFLICT (queue) DO NOTHING RETURNING cluster)
		SELECT cluster FROM ins UNION ALL SELECT cluster FROM placements WHERE queue = $1 LIMIT 1`, queue, cluster).Scan(&placed)
	if errors.Is(err, pgx.ErrNoRows) {
		// A concurrent Place committed the row after this statement's
		// snapshot: the insert waited for it and did nothing, and the
		// select could not see it. A new statement does.
		var ok bool
		placed, ok, err = p.Lookup(ctx, queue)
		if err == nil && !ok {
			err = errors.New("postgres: placement of " + queue + " vanished")
		}
	}
	return placed, err
}

// Counts returns how many queue names are placed on each cluster that has
// any (deleted queues included: their names stay placed).
func (p *Placements) Counts(ctx context.Context) (map[string]int, error) {
	rows, err := p.pool.Query(ctx, `SELECT cluster, count(*) FROM placements GROUP BY cluster`)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for rows.Next() {
		var c string
		var n int
		if err := rows.Scan(&c, &n); err != nil {
			return nil, err
		}
		out[c] = n
	}
	return out, rows.Err()
}
