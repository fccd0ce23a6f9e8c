package tidemq

import (
	"fmt"
	"strings"
)

// ValidateTraceHeader checks the value of the AWSTraceHeader system
// attribute, which AWS requires to be "a correctly formatted X-Ray trace
// header string": at most MaxTraceHeaderBytes of printable ASCII (and tabs,
// as an HTTP header may hold), made of key=value fields separated by ';'
// (blank fields and spaces around a field are allowed), one of which is
// Root, whose value is an X-Ray trace id.
//
// AWS's exact rule is not documented. What is known: it rejects a header
// whose Root is no trace id ("Root=dummy", on the X-Amzn-Trace-Id HTTP
// header SQS also reads), and it accepted "Root=1-abc-def", so the trace
// id's two hex parts are not held to their documented 8 and 24 digits.
// The check is therefore on the shape 1-<1 to 8 hex>-<1 to 24 hex> only,
// and Parent, Sampled and any other field are accepted as they come.
func ValidateTraceHeader(h string) error {
	bad := func(reason string) error {
		return Errorf(ErrInvalidParameterValue,
			"Message system attribute 'AWSTraceHeader' is invalid. Reason: %s", reason)
	}
	if len(h) > MaxTraceHeaderBytes {
		return bad(fmt.Sprintf("It must be at most %d bytes long.", MaxTraceHeaderBytes))
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return bad("It can only contain printable ASCII characters.")
		}
	}
	root := false
	for field := range strings.SplitSeq(h, ";") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		key, value, ok := strings.Cut(field, "=")
		if !ok || key == "" {
			return bad("It must be a list of key=value fields separated by semicolons.")
		}
		if key == "Root" {
			if !isTraceID(value) {
				return bad("Its Root must be an X-Ray trace id, such as Root=1-5759e988-bd862e3fe1be46a994272793.")
			}
			root = true
		}
	}
	if !root {
		return bad("It must contain an X-Ray trace id, such as Root=1-5759e988-bd862e3fe1be46a994272793.")
	}
	return nil
}

// isTraceID reports whether s has the shape of an X-Ray trace id: the
// version 1, then up to 8 and up to 24 hex digits, separated by '-'.
func isTraceID(s string) bool {
	rest, ok := strings.CutPrefix(s, "1-")
	if !ok {
		return false
	}
	epoch, unique, ok := strings.Cut(rest, "-")
	return ok && isHex(epoch, 8) && isHex(unique, 24)
}

// isHex reports whether s is 1 to max hex digits.
func isHex(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
