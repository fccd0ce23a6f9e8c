package alarms

import (
	"testing"
	"unsafe"
)

// A queue's alarm state is kept for every queue (issue 25: 100,000 of
// them): it stays in the 176-byte size class (it was 304 bytes, the 320
// class, with every alarm's threshold and summary figures in it).
func TestQueueStateSize(t *testing.T) {
	if n := unsafe.Sizeof(queueState{}); n > 176 {
		t.Errorf("queueState is %d bytes, want at most 176", n)
	}
}
