package tidemq

import (
	"strings"
	"testing"
)

// ParseARN parses as strings.SplitN(s, ":", 6) splits, and allocates
// nothing: every SNS delivery parses its queue's ARN.
func TestParseARN(t *testing.T) {
	splitN := func(s string) (ARN, bool) {
		parts := strings.SplitN(s, ":", 6)
		if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] == "" || parts[5] == "" {
			return ARN{}, false
		}
		return ARN{Partition: parts[1], Service: parts[2], Region: parts[3], Account: parts[4], Resource: parts[5]}, true
	}
	for _, s := range []string{
		"arn:aws:sqs:us-east-1:000000000000:orders",
		"arn:aws:sns:us-east-1:000000000000:topic:5f3c-sub",
		"arn:aws:iam::000000000000:role/x",
		"arn:aws:s3:::bucket",
		"arn:aws:sqs:us-east-1:000000000000:",
		"arn:aws:sqs:us-east-1:000000000000",
		"arn::sqs:r:a:q", "arn:aws::r:a:q", "ARN:aws:sqs:r:a:q", "arn:aws:sqs:r:a:q:",
		"", ":", ":::::", "arn:::::", "orders", "arn:a:b:c:d:e:f:g",
	} {
		got, ok := ParseARN(s)
		want, wantOK := splitN(s)
		if got != want || ok != wantOK {
			t.Errorf("ParseARN(%q) = %+v, %v; want %+v, %v", s, got, ok, want, wantOK)
		}
		if ok && got.String() != s {
			t.Errorf("ParseARN(%q).String() = %q", s, got.String())
		}
	}
	s := "arn:aws:sqs:us-east-1:000000000000:orders"
	if n := testing.AllocsPerRun(100, func() { ParseARN(s) }); n != 0 {
		t.Errorf("ParseARN: %v allocations, want 0", n)
	}
}
