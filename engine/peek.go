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
	max := tidemq.DefaultPeekMessages
	if p.Max != nil {
		max = *p.Max
	}
	q, _, t, err := e.lockQueue(&h, p.Queue)
	if err != nil {
		return nil, err
	}
	var out []*tidemq.Message
	q.byAge.Ascend(func(m *message) bool {
		switch {
		case m.state == statePending:
		case m.state == stateReady || p.IncludeInflight || p.IncludeDelayed && m.state == stateDelayed:
			s := m.snapshot(q, "")
			switch m.state {
			case stateDelayed:
				s.DelayedUntil = m.availableAt.time()
			case stateInflight:
				s.InvisibleUntil = m.visibleAt.time()
			}
			out = append(out, s)
		}
		return len(out) < max
	})
	return out, e.finish(&h, t)
}
