package tidemq

import "testing"

// The handle format is on the wire: clients hold handles across a
// restart and an upgrade. These were sealed by the brokers' codecs before
// they were one.
func TestReceiptCodecFormat(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	r := Receipt{Queue: 7, Seq: 123456, Count: 3}
	for _, c := range []struct {
		version byte
		handle  string
	}{{1, "AQfAxAcDHb-5T2Xw21DbhIoG"}, {2, "AgfAxAcDtFjngQthYbNUcGQc"}} {
		codec := ReceiptCodec{Version: c.version, Key: key}
		if got := codec.Encode(r); got != c.handle {
			t.Errorf("version %d: Encode = %q, want %q", c.version, got, c.handle)
		}
		if got, ok := codec.Decode(c.handle); !ok || got != r {
			t.Errorf("version %d: Decode = %+v %v", c.version, got, ok)
		}
	}
}

func TestReceiptCodecRefuses(t *testing.T) {
	key := []byte("k")
	c := ReceiptCodec{Version: 1, Key: key}
	h := c.Encode(Receipt{Queue: 1, Seq: 2, Count: 1})
	for name, s := range map[string]string{
		"other key":     ReceiptCodec{Version: 1, Key: []byte("j")}.Encode(Receipt{Queue: 1, Seq: 2, Count: 1}),
		"other version": ReceiptCodec{Version: 2, Key: key}.Encode(Receipt{Queue: 1, Seq: 2, Count: 1}),
		"count 0":       c.Encode(Receipt{Queue: 1, Seq: 2}),
		"huge seq":      c.Encode(Receipt{Queue: 1, Seq: 1 << 63, Count: 1}),
		"cut":           h[:len(h)-2],
		"not base64":    "!!!!",
		"empty":         "",
	} {
		if _, ok := c.Decode(s); ok {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := c.Open("", 1); !HasCode(err, ErrMissingParameter) {
		t.Errorf("Open empty: %v", err)
	}
	if _, err := c.Open(h, 9); !HasCode(err, ErrReceiptHandleIsInvalid) {
		t.Errorf("Open for another queue: %v", err)
	}
	if r, err := c.Open(h, 1); err != nil || r.Seq != 2 {
		t.Errorf("Open: %+v %v", r, err)
	}
}
