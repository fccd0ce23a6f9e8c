package tidemq

import "time"

// Handled is the message a receipt handle names, as its broker finds it
// when a request acts on it: what the rules below decide on, the same on
// every store. A broker fills it in from its own record of the message.
type Handled struct {
	Gone         bool      // the message is no longer in its queue
	FIFO         bool      // the message is in a FIFO queue
	Receipt      Receipt   // the handle's receipt
	ReceiveCount int       // the message's receive count now
	Inflight     bool      // in flight now
	Ready        bool      // receivable now (neither in flight nor delayed)
	ReceivedAt   time.Time // its latest receive, which the 12-hour cap counts from
}

// Latest reports whether the handle is of the message's latest receive.
// Only that one records a failure, on every queue type: a failure reported
// with an older handle belongs to a delivery that is over.
func (h Handled) Latest() bool { return h.Receipt.Count == h.ReceiveCount }

// Stale reports whether the handle no longer deletes or changes the
// visibility of its message (ExpiredReceiptHandle): on a FIFO queue only
// the latest receive's handle does, and only while the message is in
// flight. On a standard queue any handle the message was given does.
func (h Handled) Stale() bool { return h.FIFO && (!h.Latest() || !h.Inflight) }

// VisibilityChange is what one ChangeMessageVisibility entry does to its
// message.
type VisibilityChange struct {
	// Write is false when nothing changes: a receivable message given 0.
	Write bool
	// Release is a timeout of 0 for a message in flight: it is receivable
	// again at once, with a ReleasedEvent in its story.
	Release bool
	// VisibleAt is the new end of the visibility timeout.
	VisibleAt time.Time
}

// Decide applies ChangeMessageVisibility's rules to one entry, already
// validated, whose handle named h, at now.
//
// On a standard queue SQS accepts an expired handle: the message, visible
// again, is hidden for the new timeout (0 changes nothing). The timeout
// may not end more than MaxVisibilityTimeout after the latest receive.
func (e *ChangeVisibilityEntry) Decide(h Handled, now time.Time) (VisibilityChange, error) {
	v := 0 // a batch entry without a timeout
	if e.VisibilityTimeout != nil {
		v = *e.VisibilityTimeout
	}
	switch {
	case h.Gone:
		return VisibilityChange{}, MessageNotAvailableForVisibility(e.ReceiptHandle)
	case h.Stale():
		return VisibilityChange{}, ExpiredReceiptHandle(e.ReceiptHandle)
	case !h.Inflight && !h.Ready:
		return VisibilityChange{}, MessageNotInflight()
	}
	end := now.Add(time.Duration(v) * time.Second)
	if end.After(h.ReceivedAt.Add(MaxVisibilityTimeout * time.Second)) {
		return VisibilityChange{}, VisibilityBeyondLimit(v)
	}
	if v == 0 && !h.Inflight {
		return VisibilityChange{VisibleAt: end}, nil
	}
	return VisibilityChange{Write: true, Release: v == 0, VisibleAt: end}, nil
}
