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

// messageRecord.Len is the record's length exactly: a store writes the
// record in place into that many bytes (storage.Filler), so a length off
// by one would cut a record short or leave a byte of garbage in it. The
// lengths at varint boundaries (127/128 bytes, negative and extreme
// stamps) are where it would be.
func TestMessageRecordLenIsExact(t *testing.T) {
	var ms []*message
	for _, n := range []int{0, 1, 127, 128, 16383, 16384} {
		for _, st := range []stamp{0, 1, -1, 63, 64, -64, -65, 1<<62 - 1, -1 << 63, 1<<63 - 1} {
			ms = append(ms, &message{StoredMessage: tidemq.StoredMessage{
				ID: strings.Repeat("i", n%200), Body: strings.Repeat("b", n), Sender: strings.Repeat("s", n%130),
				Sent: st, Enqueued: -st, Group: strings.Repeat("g", n%129), DLQSource: "d",
				Attrs: map[string]tidemq.MessageAttributeValue{strings.Repeat("a", n%128+1): {DataType: "Binary", BinaryValue: make([]byte, n)}},
			}, availableAt: st, fifoSeq: uint64(st)})
		}
	}
	for _, m := range ms {
		r := (*messageRecord)(m)
		p := make([]byte, r.Len())
		r.Fill(p) // panics if the record is not Len bytes
		got, err := decodeMessage(1, p)
		if err != nil || got.Body != m.Body || got.Sent != m.Sent || got.Enqueued != m.Enqueued || got.availableAt != m.availableAt ||
			got.fifoSeq != m.fifoSeq || got.Sender != m.Sender || got.Group != m.Group || len(got.Attrs) != 1 {
			t.Fatalf("round trip of a %d-byte body, stamp %d: %v", len(m.Body), m.Sent, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Fill into a slice longer than the record did not panic")
		}
	}()
	r := (*messageRecord)(ms[0])
	r.Fill(make([]byte, r.Len()+1))
}
