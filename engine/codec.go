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

// attrsSize bounds what attrs writes of m.
func attrsSize(m map[string]tidemq.MessageAttributeValue) int {
	n := binary.MaxVarintLen64
	for name, v := range m {
		n += 4*binary.MaxVarintLen64 + len(name) + len(v.DataType) + len(v.StringValue) + len(v.BinaryValue)
	}
	return n
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

// encodeMessage writes the immutable part of a message.
func encodeMessage(m *message) []byte {
	// Sized for the whole record, so that it is written without growing
	// (a grown copy of a large body costs as much as the body).
	n := 80 + len(m.ID) + len(m.Body) + len(m.Group) + len(m.DedupID) + len(m.Sender) + len(m.DLQSource) +
		attrsSize(m.Attrs) + attrsSize(m.SysAttrs)
	e := encoder{b: make([]byte, 0, n)}
	e.b = append(e.b, recordVersion)
	e.str(m.ID)
	e.str(m.Body)
	e.attrs(m.Attrs)
	e.attrs(m.SysAttrs)
	e.str(m.Group)
	e.str(m.DedupID)
	e.str(m.Sender)
	e.int(int64(m.Sent))
	e.int(int64(m.Enqueued))
	e.int(int64(m.availableAt))
	e.str(m.DLQSource)
	e.uint(m.fifoSeq)
	return e.b
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
