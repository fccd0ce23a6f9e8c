package engine

import (
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
)

// encodeMessage sizes its buffer for the whole record: the record is
// written in one allocation, never grown (a grown copy of a large body
// costs as much as the body).
func TestEncodeMessageWritesWithoutGrowing(t *testing.T) {
	for _, m := range []*message{
		{StoredMessage: tidemq.StoredMessage{ID: strings.Repeat("i", 36), Body: strings.Repeat("b", 900), Sender: "AKIDEXAMPLE", Sent: -1 << 62, Enqueued: -1 << 62},
			availableAt: -1 << 62, fifoSeq: 1 << 63},
		{StoredMessage: tidemq.StoredMessage{ID: "x", Body: "y", Group: "g", DedupID: strings.Repeat("d", 128), DLQSource: "q", Sent: 1,
			Attrs:    map[string]tidemq.MessageAttributeValue{"a": {DataType: "String", StringValue: strings.Repeat("v", 300)}, "b": {DataType: "Binary", BinaryValue: make([]byte, 200)}},
			SysAttrs: map[string]tidemq.MessageAttributeValue{"AWSTraceHeader": {DataType: "String", StringValue: "Root=1-5759e988-bd862e3fe1be46a994272793"}}},
			fifoSeq: 1 << 63},
	} {
		if n := testing.AllocsPerRun(20, func() { encodeMessage(m) }); n != 1 {
			t.Errorf("%d allocations for a record of a %d-byte body, want 1", int(n), len(m.Body))
		}
		got, err := decodeMessage(7, encodeMessage(m))
		if err != nil || got.Body != m.Body || got.ID != m.ID || got.fifoSeq != m.fifoSeq || len(got.Attrs) != len(m.Attrs) {
			t.Errorf("round trip: %+v, %v", got, err)
		}
	}
}
