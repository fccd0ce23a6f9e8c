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
		{id: strings.Repeat("i", 36), body: strings.Repeat("b", 900), sender: "AKIDEXAMPLE", sent: -1 << 62, enqueued: -1 << 62, availableAt: -1 << 62, fifoSeq: 1 << 63},
		{id: "x", body: "y", group: "g", dedupID: strings.Repeat("d", 128), dlqSource: "q", sent: 1, fifoSeq: 1 << 63,
			attrs:    map[string]tidemq.MessageAttributeValue{"a": {DataType: "String", StringValue: strings.Repeat("v", 300)}, "b": {DataType: "Binary", BinaryValue: make([]byte, 200)}},
			sysAttrs: map[string]tidemq.MessageAttributeValue{"AWSTraceHeader": {DataType: "String", StringValue: "Root=1-5759e988-bd862e3fe1be46a994272793"}}},
	} {
		if n := testing.AllocsPerRun(20, func() { encodeMessage(m) }); n != 1 {
			t.Errorf("%d allocations for a record of a %d-byte body, want 1", int(n), len(m.body))
		}
		got, err := decodeMessage(7, encodeMessage(m))
		if err != nil || got.body != m.body || got.id != m.id || got.fifoSeq != m.fifoSeq || len(got.attrs) != len(m.attrs) {
			t.Errorf("round trip: %+v, %v", got, err)
		}
	}
}
