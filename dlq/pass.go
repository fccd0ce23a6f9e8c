package dlq

import (
	"context"
	"crypto/md5"
	"fmt"
	"time"
)

// pass is what one redrive pass remembers, so that it ends.
//
// A redrive pass is bounded by what was in the DLQ when it started:
//
//   - It handles at most budget messages (the DLQ's visible, in-flight and
//     delayed messages when the pass started, or --limit if smaller), so
//     messages that keep arriving while it runs wait for the next pass.
//   - A message it has already moved is never moved again. A live consumer
//     that fails a redriven message at once sends it back to the DLQ: by
//     maxReceiveCount (the DLQ then holds the message under the id that
//     SendMessage returned to the redrive), or straight, as seed 002's
//     send_to_dlq does (a new id, but the body the redrive sent). Such a
//     message "came back": it stays in the DLQ and the summary names it.
//
// Without both, a redrive against a consumer that fails a message at once
// moved that message back and forth until it was killed.
type pass struct {
	start time.Time
	// budget is how many more messages the pass may handle; <0: unbounded
	// (the DLQ's depth could not be read).
	budget int64
	// sentAs maps the id SendMessage gave a moved message to its id in the
	// DLQ; sentBody maps the MD5 of a body as sent to that id.
	sentAs   map[string]string
	sentBody map[[16]byte]string
	// movedTo is where each message moved in this pass went, by DLQ id.
	movedTo map[string]string
}

// clockSlack is how far the endpoint's clock (SentTimestamp) may be behind
// ours for a message sent during the pass to count as sent during it.
const clockSlack = 5 * time.Second

func newPass(start time.Time, budget int64) *pass {
	return &pass{start: start, budget: budget, sentAs: make(map[string]string),
		sentBody: make(map[[16]byte]string), movedTo: make(map[string]string)}
}

// CameBack is a message that was moved by a redrive pass and came back to
// the DLQ during that same pass, so the pass left it there.
type CameBack struct {
	// MessageID is its id in the DLQ now; Original its id when the pass
	// moved it (the same when the DLQ kept the id).
	MessageID, Original string
	// To is the queue the pass had moved it to.
	To string
}

// moved records that m was sent (as sentID, with body) to dst.
func (p *pass) moved(m *Message, sentID, body, dst string) {
	p.movedTo[m.MessageID] = dst
	if sentID != "" {
		p.sentAs[sentID] = m.MessageID
	}
	p.sentBody[md5.Sum([]byte(body))] = m.MessageID
	p.use()
}

// use counts one message against the budget.
func (p *pass) use() {
	if p.budget > 0 {
		p.budget--
	}
}

// exhausted reports whether the pass has handled all it may.
func (p *pass) exhausted() bool { return p.budget == 0 }

// cameBack reports whether m is a message this pass already moved: the same
// id, the id the redrive's send got, or (for a message sent after the pass
// started) the very body the redrive sent.
func (p *pass) cameBack(m *Message) (CameBack, bool) {
	if to, ok := p.movedTo[m.MessageID]; ok {
		return CameBack{MessageID: m.MessageID, Original: m.MessageID, To: to}, true
	}
	if orig, ok := p.sentAs[m.MessageID]; ok {
		return CameBack{MessageID: m.MessageID, Original: orig, To: p.movedTo[orig]}, true
	}
	if orig, ok := p.sentBody[md5.Sum([]byte(m.Body))]; ok && !m.Sent().Before(p.start.Add(-clockSlack)) {
		return CameBack{MessageID: m.MessageID, Original: orig, To: p.movedTo[orig]}, true
	}
	return CameBack{}, false
}

// scanCameBack looks, once the pass has ended, at what the DLQ holds now
// that the pass did not see, for messages it moved that have already come
// back, so the summary can name them. On tidemq it peeks; elsewhere it
// receives and releases (see inspect), looking at no more than twice what
// the pass moved.
func (c *Client) scanCameBack(ctx context.Context, src *queueRef, p *pass, seen map[string]bool, res *RedriveResult, visibility int32) {
	msgs, err := c.inspect(ctx, src, min(1000, 2*len(p.movedTo)+10), true, visibility)
	if err != nil {
		c.warnf("could not look for moved messages that came back to %s: %v", src.Name, err)
	}
	for _, m := range msgs {
		if seen[m.MessageID] {
			continue
		}
		if cb, ok := p.cameBack(m); ok {
			res.CameBack = append(res.CameBack, cb)
		}
	}
}

// reportCameBack names the messages that came back.
func (c *Client) reportCameBack(src *queueRef, res *RedriveResult) {
	if len(res.CameBack) == 0 {
		return
	}
	fmt.Fprintf(c.Out, "came back to %s during this pass and were not moved again (their consumer fails them at once; see 'tidemq dlq peek %s'):\n", src.Name, src.Name)
	for _, cb := range res.CameBack {
		if cb.Original == cb.MessageID {
			fmt.Fprintf(c.Out, "  %s: moved to %s, dead-lettered again\n", cb.MessageID, cb.To)
		} else {
			fmt.Fprintf(c.Out, "  %s: is %s, moved to %s, dead-lettered again\n", cb.MessageID, cb.Original, cb.To)
		}
	}
}
