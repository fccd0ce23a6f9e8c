package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The group commit's writer keeps its connection busy. A group's
// statement runs in PostgreSQL for about a millisecond, and sending it,
// reading its answer and answering its requests take as long again on a
// loaded machine (the node's goroutines and the database's backend wait
// for a core in turn): written one after the other, the database sat idle
// between two groups for half the time, with the writer the one thing
// every send and delete waits for. So the writer sends each group while
// the one before it still runs, on the same connection in pipeline mode,
// each in an implicit transaction of its own (its own Sync): PostgreSQL
// runs them one after the other, as before, and goes from one to the next
// at once.
//
// What does not change: a request is answered only after the statement
// that carries it committed (its answer is read after its Sync); the
// statements of one writer never run side by side (four writers side by
// side did worse, commit.go), and a group gathers what arrived while the
// one before it ran, so groups stay as large as the load makes them.
// A group whose statement fails does not fail the group behind it (its
// own transaction); its requests are written again each on its own, on
// the plain path, once the pipeline is drained.
const (
	// pipelineDepth is how many groups a writer has sent and not yet read:
	// one running, one waiting behind it.
	pipelineDepth = 2
	// pipelineRun bounds how long one pipeline keeps taking new groups
	// before it drains and its connection goes back to the pool, so that
	// its context's deadline (a minute, as a plain statement's) is never
	// near.
	pipelineRun = time.Second
)

// commitRun writes first and every request that arrives while earlier
// ones are written, until none waits, pipelining the groups' statements
// on one connection.
func (b *Broker) commitRun(first *writeReq) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		b.commitGroup(b.gather(first)) // fails each request, or gets a connection later
		return
	}
	failed := b.pipeline(ctx, conn, first)
	conn.Release()
	for _, group := range failed {
		for _, r := range group {
			b.commitGroup([]*writeReq{r})
		}
	}
}

// sentGroup is a group whose statement is in the pipeline.
type sentGroup struct {
	group   []*writeReq
	limited bool
	sd      *pgconn.StatementDescription
}

// pipeline runs the pipelined writer on conn, starting with first, and
// returns the groups whose statements failed (or whose outcome the loss of
// the connection left unknown), to be written again request by request.
func (b *Broker) pipeline(ctx context.Context, conn *pgxpool.Conn, first *writeReq) (failed [][]*writeReq) {
	c := conn.Conn()
	// The statements are prepared before the pipeline starts (a prepared
	// statement is described once per connection, then reused).
	sds := map[string]*pgconn.StatementDescription{}
	prepare := func(sql string) (*pgconn.StatementDescription, error) {
		if sd, ok := sds[sql]; ok {
			return sd, nil
		}
		sd, err := c.Prepare(ctx, sql, sql)
		if err == nil {
			sds[sql] = sd
		}
		return sd, err
	}
	for _, sql := range []string{commitSQL, commitSendsSQL, commitDeletesSQL} {
		if _, err := prepare(sql); err != nil {
			return [][]*writeReq{b.gather(first)}
		}
	}
	if b.maxQueueBytes > 0 {
		if _, err := prepare(commitLimitedSQL); err != nil {
			return [][]*writeReq{b.gather(first)}
		}
	}
	m := c.TypeMap()
	pipe := c.PgConn().StartPipeline(ctx)
	var (
		inflight []sentGroup
		builders [pipelineDepth]pgx.ExtendedQueryBuilder
		next     = 0 // the builder of the next group sent; a builder's buffers live until its group is read
		start    = time.Now()
		broken   error
		stale    bool // a statement failed
	)
	send := func(group []*writeReq) {
		st := b.groupStatement(group)
		sd := sds[st.sql]
		eqb := &builders[next]
		if err := eqb.Build(m, sd, st.args); err != nil {
			failed = append(failed, group)
			return
		}
		next = (next + 1) % pipelineDepth
		pipe.SendQueryStatement(sd, eqb.ParamValues, eqb.ParamFormats, eqb.ResultFormats)
		pipe.SendPipelineSync()
		inflight = append(inflight, sentGroup{group: group, limited: st.limited, sd: sd})
		if err := pipe.Flush(); err != nil {
			broken = err
		}
	}
	for broken == nil {
		for len(inflight) < pipelineDepth && broken == nil && (first != nil || time.Since(start) < pipelineRun) {
			group := b.gather(first)
			first = nil
			if group == nil {
				break
			}
			send(group)
		}
		if len(inflight) == 0 || broken != nil {
			break
		}
		sg := inflight[0]
		inflight = inflight[1:]
		var out groupResult
		err := readGroup(pipe, m, sg, &out)
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
			b.groupWritten(sg.group, &out)
			b.answer(sg.group, nil)
		case errors.As(err, &pgErr):
			failed = append(failed, sg.group) // its transaction rolled back; the pipeline goes on
			stale = true
		default:
			broken = err
			failed = append(failed, sg.group)
		}
	}
	for _, sg := range inflight {
		failed = append(failed, sg.group)
	}
	if err := pipe.Close(); err != nil && broken == nil {
		b.log.Debug("postgres: closing the group commit's pipeline", "err", err)
	}
	if stale && broken == nil {
		// A statement failed: if its prepared statement is what failed
		// (gone after a DISCARD ALL, or its plan's result changed by a
		// migration), the next run prepares them again. A failure of the
		// rows themselves (a queue deleted meanwhile) costs a Describe.
		for sql := range sds {
			if err := c.Deallocate(ctx, sql); err != nil {
				break // the connection's failure: the pool drops it
			}
		}
	}
	return failed
}

// readGroup reads the answer of sg's statement and its Sync from pipe. A
// statement's error (a *pgconn.PgError) leaves the pipeline usable: the
// Sync behind it is read too.
func readGroup(pipe *pgconn.Pipeline, m *pgtype.Map, sg sentGroup, out *groupResult) error {
	res, err := pipe.GetResults()
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			if _, serr := pipe.GetResults(); serr != nil && !errors.As(serr, &pgErr) {
				return serr
			}
		}
		return err
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		return errors.New("postgres: the group commit's pipeline answered out of turn")
	}
	dest := out.dest(sg.limited)
	var scanErr error
	rows := 0
	for rr.NextRow() {
		rows++
		fields := rr.FieldDescriptions()
		for i, v := range rr.Values() {
			if i < len(dest) && scanErr == nil {
				scanErr = m.Scan(fields[i].DataTypeOID, fields[i].Format, v, dest[i])
			}
		}
	}
	if _, err := rr.Close(); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			if _, serr := pipe.GetResults(); serr != nil && !errors.As(serr, &pgErr) {
				return serr
			}
		}
		return err
	}
	if res, err := pipe.GetResults(); err != nil {
		return err
	} else if _, ok := res.(*pgconn.PipelineSync); !ok {
		return errors.New("postgres: the group commit's pipeline answered out of turn")
	}
	if scanErr != nil {
		return scanErr
	}
	if rows != 1 {
		return errors.New("postgres: the group commit's statement answered no row")
	}
	return nil
}
