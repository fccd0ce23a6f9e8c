package engine

import (
	"context"

	"github.com/tidemq/tidemq"
)

// PeekMessages returns messages, oldest first, without receiving them: no
// receive count, visibility or history changes, and no receipt handles.
func (e *Engine) PeekMessages(ctx context.Context, p tidemq.PeekMessagesParams) (_ []*tidemq.Message, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	max := p.Limit()
	q, _, t, err := e.lockQueue(&h, p.Queue)
	if err != nil {
		return nil, err
	}
	var hot []*message
	q.byAge.Ascend(func(m *message) bool {
		switch {
		case m.state == statePending:
		case m.state == stateReady || p.IncludeInflight || p.IncludeDelayed && m.state == stateDelayed:
			hot = append(hot, m)
		}
		return len(hot) < max
	})
	// The paged messages are ready: merge the oldest of them in.
	cold := q.peekPaged(max)
	out := make([]*tidemq.Message, 0, min(max, len(hot)+len(cold)))
	for len(out) < max && (len(hot) > 0 || len(cold) > 0) {
		var m *message
		if len(cold) == 0 || len(hot) > 0 && olderFirst(hot[0], cold[0]) {
			m, hot = hot[0], hot[1:]
		} else {
			m, cold = cold[0], cold[1:]
		}
		s := m.snapshot(q, "")
		switch m.state {
		case stateDelayed:
			s.DelayedUntil = m.availableAt.Time()
		case stateInflight:
			s.InvisibleUntil = m.VisibleAt.Time()
		}
		out = append(out, s)
	}
	return out, e.finish(&h, t)
}
