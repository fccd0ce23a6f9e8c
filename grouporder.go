package tidemq

// The order in which a FIFO queue serves its groups (AWS's, as recorded
// against SQS): the groups that can deliver stand in a line, and a group
// joins it at the back when its first message becomes receivable. An
// untouched group joins when its first message is sent (or its delay
// ends); a group whose message was received and came back (its visibility
// timeout ran out, or was set to 0) joins again at that moment, behind
// every group already waiting. So after g1 and g2 were received and came
// back, an untouched g3 is served first (g3, g1, g2), and a message released
// with ChangeMessageVisibility 0 is served after the groups that were
// already waiting. A group whose message was deleted keeps its place: its
// next message has waited since it was sent. At the same instant, a group
// that came back stands behind one that did not, and then the older head
// (lower sequence number) first.
//
// Both brokers keep this order: the embedded engine in its heap of
// groups (GroupHead.ServedBefore), PostgreSQL in its FIFO receive query,
// which sorts by the same three keys.

// GroupHead is what decides a group's place in the line: its first live
// message's.
type GroupHead struct {
	// Since is when the head became receivable, in nanoseconds since the
	// epoch: the end of its visibility timeout (or the time it was
	// released) when Returned, else the end of its delay (its send).
	Since int64
	// Returned reports that the head was received before (its receive
	// count is above zero).
	Returned bool
	// Seq is its sequence number.
	Seq uint64
}

// ServedBefore reports whether group a is served before group b.
func (a GroupHead) ServedBefore(b GroupHead) bool {
	if a.Since != b.Since {
		return a.Since < b.Since
	}
	if a.Returned != b.Returned {
		return b.Returned
	}
	return a.Seq < b.Seq
}
