package sqs

import "strconv"

// A fast path for decoding the hottest requests (SendMessage,
// SendMessageBatch, DeleteMessageBatch) without encoding/json's
// reflection, which was 15% of the server's CPU on batch sends.
//
// It accepts only the plain shape those requests have in the common case:
// exactly-spelled known members, strings of printable ASCII without
// escapes, small non-negative integers, no message attributes. Anything
// else makes it give up, and the request is decoded again by
// encoding/json, which then also produces the errors. So the fast path
// never decides what a request means differently: where it succeeds, it
// yields what encoding/json would (FuzzFastDecode checks this).

// fastDecoder is implemented by inputs with a fast path. decodeFast
// reports whether it decoded the whole body; when it returns false the
// receiver's contents are unspecified.
type fastDecoder interface {
	decodeFast(body []byte) bool
}

// scanner reads a JSON text from b; ok turns false at the first thing the
// fast path does not handle, and every method is a no-op after that.
type scanner struct {
	b  []byte
	i  int
	ok bool
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte (0 at the end).
func (s *scanner) peek() byte {
	s.space()
	if !s.ok || s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) expect(c byte) {
	if s.peek() != c {
		s.ok = false
		return
	}
	s.i++
}

// str reads a string of printable ASCII without escapes.
func (s *scanner) str() string {
	s.expect('"')
	if !s.ok {
		return ""
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := string(s.b[start:s.i])
			s.i++
			return v
		case c < 0x20 || c >= 0x7f || c == '\\':
			s.ok = false
			return ""
		}
		s.i++
	}
	s.ok = false
	return ""
}

// smallInt reads a non-negative integer of at most 9 digits, without a
// leading zero unless it is 0 (as JSON allows).
func (s *scanner) smallInt() int {
	if !s.ok {
		return 0
	}
	s.space()
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	digits := s.b[start:s.i]
	if len(digits) == 0 || len(digits) > 9 || (len(digits) > 1 && digits[0] == '0') {
		s.ok = false
		return 0
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.ok = false
		return 0
	}
	n, err := strconv.Atoi(string(digits))
	if err != nil {
		s.ok = false
	}
	return n
}

// object calls member for each member of an object; member returns false
// for a key it does not handle.
func (s *scanner) object(member func(key string) bool) {
	s.expect('{')
	if s.peek() == '}' {
		s.i++
		return
	}
	for s.ok {
		key := s.str()
		s.expect(':')
		if !s.ok || !member(key) {
			s.ok = false
			return
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.ok = false
		}
	}
}

// array calls elem for each element of an array (null is not handled).
func (s *scanner) array(elem func()) {
	s.expect('[')
	if s.peek() == ']' {
		s.i++
		return
	}
	for s.ok {
		elem()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return
		default:
			s.ok = false
		}
	}
}

// end reports whether the whole input was read.
func (s *scanner) end() bool {
	s.space()
	return s.ok && s.i == len(s.b)
}

// message reads one of the message members shared by SendMessage and the
// entries of SendMessageBatch.
func (m *messageFields) member(s *scanner, key string) bool {
	switch key {
	case "MessageBody":
		m.MessageBody = exactString(s.str())
	case "MessageGroupId":
		v := s.str()
		m.MessageGroupID = &v
	case "MessageDeduplicationId":
		v := s.str()
		m.MessageDeduplicationID = &v
	case "DelaySeconds":
		n := s.smallInt()
		m.DelaySeconds = &n
	default:
		return false
	}
	return true
}

func (in *sendMessageInput) decodeFast(body []byte) bool {
	s := &scanner{b: body, ok: true}
	s.object(func(key string) bool {
		if key == "QueueUrl" {
			in.QueueURL = s.str()
			return true
		}
		return in.messageFields.member(s, key)
	})
	return s.end()
}

// batchEntries reads the Entries member of a batch request into *out,
// each entry's members through member. A second Entries member gives up
// (encoding/json would merge the two).
func batchEntries[E any](s *scanner, out *[]E, seen *bool, member func(e *E, key string) bool) bool {
	if *seen {
		return false
	}
	*seen = true
	*out = make([]E, 0, 10)
	s.array(func() {
		var e E
		s.object(func(key string) bool { return member(&e, key) })
		*out = append(*out, e)
	})
	return true
}

func (in *sendMessageBatchInput) decodeFast(body []byte) bool {
	s := &scanner{b: body, ok: true}
	seen := false
	s.object(func(key string) bool {
		switch key {
		case "QueueUrl":
			in.QueueURL = s.str()
			return true
		case "Entries":
			return batchEntries(s, &in.Entries, &seen, func(e *sendMessageBatchEntry, key string) bool {
				if key == "Id" {
					e.ID = s.str()
					return true
				}
				return e.messageFields.member(s, key)
			})
		}
		return false
	})
	return s.end()
}

func (in *deleteMessageBatchInput) decodeFast(body []byte) bool {
	s := &scanner{b: body, ok: true}
	seen := false
	s.object(func(key string) bool {
		switch key {
		case "QueueUrl":
			in.QueueURL = s.str()
			return true
		case "Entries":
			return batchEntries(s, &in.Entries, &seen, func(e *deleteMessageBatchEntry, key string) bool {
				switch key {
				case "Id":
					e.ID = s.str()
				case "ReceiptHandle":
					e.ReceiptHandle = s.str()
				default:
					return false
				}
				return true
			})
		}
		return false
	})
	return s.end()
}
