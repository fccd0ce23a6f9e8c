package tidemq

// InflightLimits are the caps on the messages in flight (received, not yet
// deleted, their visibility timeout running) of one queue. AWS's are
// MaxInflightStandard and MaxInflightFIFO (120,000 each); a broker takes
// them from its options so that a test can use small ones (brokertest's
// QueueLimits group: a cap of a few messages behaves as 120,000 does).
//
// What a broker does at the cap is AWS's (reference §4): a receive from a
// standard queue with Standard messages in flight is refused with
// OverLimit (TooManyInflight); a receive from a FIFO queue with FIFO
// messages in flight returns no messages, without an error, and a receive
// near the cap returns no more than the room left. Both brokers keep them
// alike; brokertest checks it.
type InflightLimits struct {
	// Standard caps a standard queue; 0 (or less) means MaxInflightStandard.
	Standard int
	// FIFO caps a FIFO queue; 0 (or less) means MaxInflightFIFO.
	FIFO int
}

// Cap is the cap on a queue's messages in flight, FIFO or standard.
func (l InflightLimits) Cap(fifo bool) int {
	if fifo {
		if l.FIFO > 0 {
			return l.FIFO
		}
		return MaxInflightFIFO
	}
	if l.Standard > 0 {
		return l.Standard
	}
	return MaxInflightStandard
}
