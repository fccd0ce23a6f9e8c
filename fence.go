package tidemq

import (
	"context"
	"errors"
)

// Fencing. A lease (Leases) is held for a while, and a holder can be
// paused (a GC pause, SIGSTOP, a VM migration, a network cut) long enough
// for its lease to pass and another node to take over, then carry on as
// if it still held it. Cancelling the job's context cannot stop a process
// that is not running; the store has to. So each taking of a lease gets a
// token that grows at each change of holder (the lease's generation), the
// leader's jobs carry it (WithFence), and every write they make is refused
// by the store when the lease's token is no longer theirs: the check and
// the write are one transaction, and the check locks the lease row, so
// that a takeover waits for a fenced write in flight and every write after
// a takeover sees it.
//
// Invariant: once a node has taken a lease, no write carrying an older
// token of that lease commits.
//
// A store shared by no other node (the embedded engine) has one holder
// and ignores fences.

// Fence is the token a leader's job carries.
type Fence struct {
	Lease  string // the lease's name
	Holder string // the node that took it
	// Token is the lease's generation when Holder took it: it grows at
	// each change of holder, and is never 0 (0 is the token of a node that
	// holds nothing, which every check refuses).
	Token int64
}

// ErrFenced is the error of a write refused because its fence is stale:
// another node took the lease over since the writer took it.
var ErrFenced = errors.New("refused: this node's lease was taken over by another node (stale fencing token)")

type fenceKey struct{}

// WithFence returns ctx carrying f: a store that checks fences refuses
// the writes made with it once f is stale.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// WithoutFence returns ctx carrying no fence: for a write made in a store
// that cannot check the fence in the write's own transaction (a queue
// placed on another PostgreSQL cluster than the leases), once the fence
// has been checked by other means.
func WithoutFence(ctx context.Context) context.Context {
	return context.WithValue(ctx, fenceKey{}, nil)
}

// FenceOf returns the fence ctx carries.
func FenceOf(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}

// FencedBroker returns b with every call that changes messages (send,
// receive, delete, visibility, moves, failure records) made with the
// fence fence returns at the time of the call: the broker of a leader's
// jobs that cannot pass a context of their own down (the triggers' polls
// and deletes). fence returns a Fence with Token 0 when the node holds no
// lease. Reads and queue management pass through unfenced.
func FencedBroker(b Broker, fence func() Fence) Broker {
	return &fencedBroker{Broker: b, fence: fence}
}

type fencedBroker struct {
	Broker
	fence func() Fence
}

func (f *fencedBroker) with(ctx context.Context) context.Context { return WithFence(ctx, f.fence()) }

func (f *fencedBroker) SendMessages(ctx context.Context, p SendMessagesParams) ([]SendResult, error) {
	return f.Broker.SendMessages(f.with(ctx), p)
}

func (f *fencedBroker) ReceiveMessages(ctx context.Context, p ReceiveMessagesParams) ([]*Message, error) {
	return f.Broker.ReceiveMessages(f.with(ctx), p)
}

func (f *fencedBroker) DeleteMessages(ctx context.Context, p DeleteMessagesParams) ([]error, error) {
	return f.Broker.DeleteMessages(f.with(ctx), p)
}

func (f *fencedBroker) ChangeMessageVisibility(ctx context.Context, p ChangeVisibilityParams) ([]error, error) {
	return f.Broker.ChangeMessageVisibility(f.with(ctx), p)
}

func (f *fencedBroker) MoveMessages(ctx context.Context, p MoveMessagesParams) (*MoveMessagesResult, error) {
	return f.Broker.MoveMessages(f.with(ctx), p)
}

func (f *fencedBroker) RecordFailure(ctx context.Context, p RecordFailureParams) ([]error, error) {
	return f.Broker.RecordFailure(f.with(ctx), p)
}

type fenceCheckKey struct{}

// WithFenceCheck returns ctx carrying check, which reports whether the
// fence of the write the context is for is still current: for a write
// whose store cannot check the fence in the write's own transaction
// (WithoutFence), whose fence was checked once before it started. A long
// poll calls it before each look at its queue after the first
// (CheckFence), so that a leader fenced off while it waits takes nothing.
func WithFenceCheck(ctx context.Context, check func(context.Context) error) context.Context {
	return context.WithValue(ctx, fenceCheckKey{}, check)
}

// CheckFence calls the check ctx carries (WithFenceCheck); nil when it
// carries none.
func CheckFence(ctx context.Context) error {
	if check, ok := ctx.Value(fenceCheckKey{}).(func(context.Context) error); ok && check != nil {
		return check(ctx)
	}
	return nil
}
