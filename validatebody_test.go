package tidemq

import (
	"strings"
	"testing"
)

// TestValidateBodyCharacters: XML 1.0's characters pass, anything else is
// named in the error, whether it comes after ASCII text or after other
// characters.
func TestValidateBodyCharacters(t *testing.T) {
	for _, c := range []struct {
		body, want string // want: a part of the error, "" for none
	}{
		{"plain text\twith\r\nbreaks~\x7f", ""},
		{"héllo, 世界 \U0001F600", ""},
		{"ok\x00", "'#x0'"},
		{"abc\x1f", "'#x1F'"},
		{"é\x01", "'#x1'"},
		{"a\uFFFE", "'#xFFFE'"},
		{"a\xff", "Invalid binary character was found"},
	} {
		err := ValidateBody(c.body)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.body, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want an error naming %s", c.body, err, c.want)
		}
	}
}

// asciiPrefix, which passes eight bytes at a time, stops exactly where a
// byte-by-byte scan stops: every byte value at every position of a word
// and of the tail, after printable text and after line breaks.
func TestASCIIPrefixMatchesByteScan(t *testing.T) {
	byByte := func(s string) int {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= 0x80 || c < 0x20 && c != 0x9 && c != 0xA && c != 0xD {
				return i
			}
		}
		return len(s)
	}
	for _, fill := range []byte{'x', '\n', 0x7f, ' '} {
		for n := 0; n <= 19; n++ {
			for pos := 0; pos < n; pos++ {
				for c := 0; c < 256; c++ {
					b := []byte(strings.Repeat(string(fill), n))
					b[pos] = byte(c)
					if got, want := asciiPrefix(string(b)), byByte(string(b)); got != want {
						t.Fatalf("%q: asciiPrefix %d, want %d", b, got, want)
					}
				}
			}
		}
	}
}

func BenchmarkValidateBody(b *testing.B) {
	body := strings.Repeat(`{"Type" : "Notification",`+"\n", 32)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := ValidateBody(body); err != nil {
			b.Fatal(err)
		}
	}
}
