package engine

import (
	"fmt"
	"runtime/debug"

	"github.com/tidemq/tidemq"
)

// The engine lock and panics.
//
// A Go mutex has no owner: after a panic, nothing says whether the
// panicking goroutine holds e.mu. So every call takes e.mu through a hold,
// a value on the call's own stack that records whether the call holds the
// lock now, and defers the hold's guard:
//
//	h := hold{e: e}
//	defer h.guard(&err)
//	if err := h.lock(); err != nil {
//		return nil, err
//	}
//	... h.unlock(), or e.finish(&h, t) ...
//
// Invariants:
//   - e.mu is taken and released only through a hold (lock, relock,
//     unlock; finish releases and retakes it through the hold it is given),
//     except in Close, which defers its own unlock. Healthy does not take
//     it at all, so that it answers even while a reload holds it.
//   - A panic while the call holds e.mu fails the engine, since its memory
//     may be half-changed, releases the lock and answers InternalFailure;
//     the engine then reloads its state from the store (recover.go). A
//     panic without the lock answers InternalFailure and changes nothing.
//     Either way the panic is logged with its stack.
//   - A call that returns while holding the lock has it released by guard,
//     as with `defer mu.Unlock()`.

// hold is one call's use of e.mu; see above.
type hold struct {
	e    *Engine
	held bool
}

// lock takes e.mu and checks that the engine can work; on error the lock
// is not held. A failed or closed engine is refused before the lock is
// taken too, so that requests fail at once while a reload holds it.
func (h *hold) lock() error {
	e := h.e
	if err := e.refusal(); err != nil {
		return err
	}
	h.relock()
	if err := e.refusal(); err != nil {
		h.unlock()
		return err
	}
	return nil
}

// relock takes e.mu without checking the engine's state: for a call that
// finishes what it started (publishing a durable batch, leaving a long
// poll) and must check for itself what changed meanwhile.
func (h *hold) relock() {
	h.e.mu.Lock()
	h.held = true
}

// unlock releases e.mu.
func (h *hold) unlock() {
	h.held = false
	h.e.mu.Unlock()
}

// guard is deferred by every call that takes e.mu. It releases the lock
// if the call still holds it, and turns a panic into an InternalFailure
// error in *errp (errp may be nil), failing the engine if the panic came
// while the lock was held.
func (h *hold) guard(errp *error) {
	r := recover()
	if r == nil {
		if h.held {
			h.unlock()
		}
		return
	}
	e := h.e
	held := h.held
	e.log.Error("engine: panic in an operation", "panic", fmt.Sprint(r), "lock_held", held, "stack", string(debug.Stack()))
	if held {
		e.failLocked(panicError{r})
		h.unlock()
	}
	if errp != nil {
		*errp = tidemq.Errorf(tidemq.ErrInternalFailure, "The server hit an internal error.")
	}
}

// panicError is a recovered panic, as the cause of a failure.
type panicError struct{ value any }

func (p panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }
