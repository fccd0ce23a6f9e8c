package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// Fences are checked here, in the transaction of the write they guard
// (tidemq.Fence: a leader's job carries its lease's token in its context):
// Broker.inTx and the KV's commits call checkFence first when the context
// carries a fence. checkFence locks the lease's row FOR SHARE until the
// transaction ends, so a takeover (an UPDATE of that row) waits for the
// fenced write to commit or roll back, and a fenced write that comes after
// a takeover reads the new generation and is refused: no write with a
// stale token ever commits after a takeover, however long its writer was
// paused. The check is one indexed read of a one-row lock; writes that
// carry no fence (every client request) skip it.

// checkFence returns tidemq.ErrFenced (wrapped with what it found) unless
// f's holder still holds f's lease at f's token. The lease's expiry is not
// looked at: a holder whose lease passed while nobody took it over is
// still the only one acting, and its renewal keeps the token.
func checkFence(ctx context.Context, tx pgx.Tx, f tidemq.Fence) error {
	var holder string
	var gen int64
	err := tx.QueryRow(ctx, `SELECT holder, generation FROM leases WHERE name = $1 FOR SHARE`, f.Lease).Scan(&holder, &gen)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w (lease %q: token %d, never taken)", tidemq.ErrFenced, f.Lease, f.Token)
	}
	if err != nil {
		return err
	}
	if f.Token == 0 || holder != f.Holder || gen != f.Token {
		if holder == "" {
			holder = "nobody"
		}
		return fmt.Errorf("%w (lease %q: %s holds token %d, now held by %s at token %d)", tidemq.ErrFenced, f.Lease, f.Holder, f.Token, holder, gen)
	}
	return nil
}

// fenced returns fn preceded by the check of ctx's fence, or fn when ctx
// carries none.
func fenced(ctx context.Context, fn func(tx pgx.Tx) error) func(tx pgx.Tx) error {
	f, ok := tidemq.FenceOf(ctx)
	if !ok {
		return fn
	}
	return func(tx pgx.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		return fn(tx)
	}
}

// Check reports whether the fence ctx carries is current (nil when ctx
// carries none), for a leader's action whose effect is outside the
// database (an alarm's webhook): it is checked right before the action.
func (l *Leases) Check(ctx context.Context) error {
	return pgx.BeginFunc(ctx, l.pool, fenced(ctx, func(pgx.Tx) error { return nil }))
}
