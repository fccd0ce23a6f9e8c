package engine

import (
	"context"

	"github.com/tidemq/tidemq"
)

// MaxPeek bounds one PeekMessages call.
const MaxPeek = 1000

// PeekMessages returns messages, oldest first, without receiving them: no
// receive count, visibility or history changes, and no receipt handles.
func (e *Engine) PeekMessages(ctx context.Context, p tidemq.PeekMessagesParams) (_ []*tidemq.Message, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	max := p.Max
	if max <= 0 {
		max = 10
	}
	if max > MaxPeek {
		return nil, tidemq.InvalidParameter("Max", max, "Must be between 1 and 1000.")
	}
	q, _, t, err := e.lockQueue(&h, p.Queue)
	if err != nil {
		return nil, err
	}
	var out []*tidemq.Message
	q.byAge.Ascend(func(m *message) bool {
		switch {
		case m.state == statePending:
		case m.state == stateReady || p.IncludeInflight:
			out = append(out, m.snapshot(q, ""))
		}
		return len(out) < max
	})
	return out, e.finish(&h, t)
}
