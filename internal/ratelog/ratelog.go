// Package ratelog bounds how fast a logger repeats itself: an slog.Handler
// that passes at most Burst warnings or errors with the same message per
// Interval, and says on the next one it passes how many it left out.
//
// Why: when a dependency fails (a PostgreSQL outage), every request fails
// the same way, and one ERROR per request (1,638 in 10 s) buries the first
// line that said what happened and fills the disk. Records below Warn are
// not limited.
package ratelog

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Options tune the limit.
type Options struct {
	Interval time.Duration    // default 10 s
	Burst    int              // records per message and interval; default 5
	Now      func() time.Time // default time.Now (tests)
}

// Handler is the rate-limiting handler around another.
type Handler struct {
	next slog.Handler
	s    *state // shared by the handlers WithAttrs and WithGroup derive
}

type state struct {
	o     Options
	mu    sync.Mutex
	byMsg map[string]*window
}

// window counts one message's records in the current interval.
type window struct {
	start      time.Time
	passed     int
	suppressed int
}

// maxMessages bounds the messages tracked: past it, windows that ended are
// dropped (messages are few: they are constant strings in the code).
const maxMessages = 1000

// New wraps next.
func New(next slog.Handler, o Options) *Handler {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Burst <= 0 {
		o.Burst = 5
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handler{next: next, s: &state{o: o, byMsg: map[string]*window{}}}
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.next.Handle(ctx, r)
	}
	pass, suppressed := h.s.admit(r.Message)
	if !pass {
		return nil
	}
	if suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", suppressed))
	}
	return h.next.Handle(ctx, r)
}

// admit reports whether a record of msg passes now, and how many of its
// records were left out since the last that passed.
func (s *state) admit(msg string) (bool, int) {
	now := s.o.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.byMsg[msg]
	if w == nil {
		if len(s.byMsg) >= maxMessages {
			for k, v := range s.byMsg {
				if now.Sub(v.start) >= s.o.Interval {
					delete(s.byMsg, k)
				}
			}
		}
		w = &window{start: now}
		s.byMsg[msg] = w
	}
	if now.Sub(w.start) >= s.o.Interval {
		w.start, w.passed = now, 0
	}
	if w.passed >= s.o.Burst {
		w.suppressed++
		return false, 0
	}
	w.passed++
	n := w.suppressed
	w.suppressed = 0
	return true, n
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(as), s: h.s}
}

func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), s: h.s}
}
