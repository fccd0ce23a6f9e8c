package engine

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/tidemq/tidemq"
)

// A small length-prefixed binary encoding for message and state records:
// they are written on every send and receive, so they avoid reflection.
// Every record starts with a version byte.

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)    { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)   { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bytes(p []byte) { e.uint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.int(0)
		return
	}
	e.int(t.UnixNano())
}

func (e *encoder) attrs(m map[string]tidemq.MessageAttributeValue) {
	e.uint(uint64(len(m)))
	for name, v := range m {
		e.str(name)
		e.str(v.DataType)
		e.str(v.StringValue)
		e.bytes(v.BinaryValue)
	}
}

func (e *encoder) history(h []tidemq.HistoryEvent) {
	e.uint(uint64(len(h)))
	for _, ev := range h {
		e.time(ev.Time)
		e.str(ev.Kind)
		e.str(ev.Queue)
		e.str(ev.Client.Addr)
		e.str(ev.Client.UserAgent)
		e.str(ev.Client.AccessKey)
		e.str(ev.Detail)
	}
}

var errCorrupt = errors.New("engine: corrupt record")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) raw() []byte {
	n := d.uint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errCorrupt
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) str() string { return string(d.raw()) }

func (d *decoder) bytes() []byte {
	p := d.raw()
	if len(p) == 0 {
		return nil
	}
	return append([]byte(nil), p...)
}

func (d *decoder) time() time.Time {
	ns := d.int()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func (d *decoder) attrs() map[string]tidemq.MessageAttributeValue {
	n := d.uint()
	if n == 0 || d.err != nil || n > uint64(len(d.b)) {
		return nil
	}
	m := make(map[string]tidemq.MessageAttributeValue, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		name := d.str()
		m[name] = tidemq.MessageAttributeValue{DataType: d.str(), StringValue: d.str(), BinaryValue: d.bytes()}
	}
	return m
}

func (d *decoder) history() []tidemq.HistoryEvent {
	n := d.uint()
	if n == 0 || d.err != nil || n > uint64(len(d.b)) {
		return nil
	}
	h := make([]tidemq.HistoryEvent, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		h = append(h, tidemq.HistoryEvent{
			Time: d.time(), Kind: d.str(), Queue: d.str(),
			Client: tidemq.ClientInfo{Addr: d.str(), UserAgent: d.str(), AccessKey: d.str()},
			Detail: d.str(),
		})
	}
	return h
}

const recordVersion = 1

// encodeMessage writes the immutable part of a message in a buffer of its
// own, in one allocation; a batch that can take it in place
// (storage.Filler) gets it through messageRecord instead, without the
// buffer.
func encodeMessage(m *message) []byte {
	r := (*messageRecord)(m)
	b := make([]byte, r.Len())
	r.Fill(b)
	return b
}

// messageRecord is a message's immutable record (the m/ key) as a
// storage.Value: its exact length, and the record written into a slice of
// that length, so that a store writes it straight into its batch.
type messageRecord message

// uvarintLen is the length of v as binary.AppendUvarint writes it.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// varintLen is the length of v as binary.AppendVarint writes it.
func varintLen(v int64) int {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	return uvarintLen(u)
}

func strLen(s string) int { return uvarintLen(uint64(len(s))) + len(s) }

// attrsLen is what attrs writes of m, exactly.
func attrsLen(m map[string]tidemq.MessageAttributeValue) int {
	n := uvarintLen(uint64(len(m)))
	for name, v := range m {
		n += strLen(name) + strLen(v.DataType) + strLen(v.StringValue) +
			uvarintLen(uint64(len(v.BinaryValue))) + len(v.BinaryValue)
	}
	return n
}

// Len is the length of the record, exactly (storage.Value).
func (r *messageRecord) Len() int {
	return 1 + strLen(r.ID) + strLen(r.Body) + attrsLen(r.Attrs) + attrsLen(r.SysAttrs) +
		strLen(r.Group) + strLen(r.DedupID) + strLen(r.Sender) +
		varintLen(int64(r.Sent)) + varintLen(int64(r.Enqueued)) + varintLen(int64(r.availableAt)) +
		strLen(r.DLQSource) + uvarintLen(r.fifoSeq)
}

// Fill writes the record into p, which is Len bytes long
// (storage.Value). It panics if the record does not fill p exactly: a
// record cut short or padded would be read back corrupt.
func (r *messageRecord) Fill(p []byte) {
	e := encoder{b: p[:0:len(p)]}
	e.b = append(e.b, recordVersion)
	e.str(r.ID)
	e.str(r.Body)
	e.attrs(r.Attrs)
	e.attrs(r.SysAttrs)
	e.str(r.Group)
	e.str(r.DedupID)
	e.str(r.Sender)
	e.int(int64(r.Sent))
	e.int(int64(r.Enqueued))
	e.int(int64(r.availableAt))
	e.str(r.DLQSource)
	e.uint(r.fifoSeq)
	if len(e.b) != len(p) || len(p) > 0 && &e.b[0] != &p[0] {
		panic("engine: message record is not the length it said")
	}
}

func decodeMessage(seq uint64, b []byte) (*message, error) {
	if len(b) == 0 || b[0] != recordVersion {
		return nil, errCorrupt
	}
	d := decoder{b: b[1:]}
	m := &message{seq: seq}
	m.ID = d.str()
	m.Body = d.str()
	m.Attrs = d.attrs()
	m.SysAttrs = d.attrs()
	m.Group = d.str()
	m.DedupID = d.str()
	m.Sender = d.str()
	m.Sent = stamp(d.int())
	m.Enqueued = stamp(d.int())
	m.availableAt = stamp(d.int())
	m.DLQSource = d.str()
	m.fifoSeq = d.uint()
	return m, d.err
}

// encodeState writes the mutable part of a message.
func encodeState(m *message) []byte {
	e := encoder{b: make([]byte, 0, 64)}
	e.b = append(e.b, recordVersion)
	e.uint(uint64(m.ReceiveCount))
	e.int(int64(m.FirstReceive))
	e.int(int64(m.ReceivedAt))
	e.int(int64(m.VisibleAt))
	e.history(m.History)
	return e.b
}

func decodeState(m *message, b []byte) error {
	d, err := decodeStateHead(m, b)
	if err != nil {
		return err
	}
	m.History = d.history()
	return d.err
}

// decodeStateHead reads the receive count and the deadlines of a state
// record into m, and returns the decoder at its history.
func decodeStateHead(m *message, b []byte) (*decoder, error) {
	if len(b) == 0 || b[0] != recordVersion {
		return nil, errCorrupt
	}
	d := &decoder{b: b[1:]}
	m.ReceiveCount = int(d.uint())
	m.FirstReceive = stamp(d.int())
	m.ReceivedAt = stamp(d.int())
	m.VisibleAt = stamp(d.int())
	return d, nil
}
