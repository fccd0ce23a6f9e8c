package engine

import "time"

// stamp is an instant as nanoseconds since the Unix epoch, 0 meaning
// never. Messages keep their instants as stamps, 8 bytes each instead of
// time.Time's 24: with six per message that is about 100 MB of heap at a
// million queued messages. Stamps compare by wall clock, as instants read
// back from the store always did.
type stamp int64

func stampOf(t time.Time) stamp {
	if t.IsZero() {
		return 0
	}
	return stamp(t.UnixNano())
}

// time returns the instant as a time.Time (the zero Time for 0).
func (s stamp) time() time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(s))
}
