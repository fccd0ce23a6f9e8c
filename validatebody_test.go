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
