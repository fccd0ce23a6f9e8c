package sigv4

import (
	"fmt"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
)

// isoBasic is the ISO 8601 basic format of X-Amz-Date.
const isoBasic = "20060102T150405Z"

func missingAuthentication() error {
	return tidemq.MissingAuthenticationToken()
}

func incomplete(format string, args ...any) error {
	return tidemq.Errorf(tidemq.ErrIncompleteSignature, format, args...)
}

func mismatch(format string, args ...any) error {
	return tidemq.Errorf(tidemq.ErrSignatureDoesNotMatch, format, args...)
}

func invalidClientToken() error {
	return tidemq.InvalidClientTokenID()
}

// missingHeaderElements is AWS's IncompleteSignature message for an
// Authorization header that lacks required elements or a date header.
func missingHeaderElements(missing []string, noDate bool, header string) error {
	var b strings.Builder
	for _, m := range missing {
		fmt.Fprintf(&b, "Authorization header requires '%s' parameter. ", m)
	}
	if noDate {
		b.WriteString("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ")
	}
	b.WriteString("Authorization=")
	b.WriteString(header)
	return incomplete("%s", b.String())
}

// missingQueryParams is AWS's IncompleteSignature message for a presigned
// request that lacks required parameters.
func missingQueryParams(missing []string) error {
	var b strings.Builder
	for _, m := range missing {
		fmt.Fprintf(&b, "AWS query-string parameters must include '%s'. ", m)
	}
	b.WriteString("Re-examine the query-string parameters.")
	return incomplete("%s", b.String())
}

func badDate(value string) error {
	return incomplete("Date must be in ISO-8601 'basic format'. Got '%s'. See http://en.wikipedia.org/wiki/ISO_8601", value)
}

// skewText renders a skew window as AWS does: "5 min" or "90 sec".
func skewText(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmt.Sprintf("%d sec", d/time.Second)
}

func signatureExpired(at, now time.Time, skew time.Duration) error {
	return mismatch("Signature expired: %s is now earlier than %s (%s - %s.)",
		at.Format(isoBasic), now.Add(-skew).Format(isoBasic), now.Format(isoBasic), skewText(skew))
}

func signatureNotYetCurrent(at, now time.Time, skew time.Duration) error {
	return mismatch("Signature not yet current: %s is still later than %s (%s + %s.)",
		at.Format(isoBasic), now.Add(skew).Format(isoBasic), now.Format(isoBasic), skewText(skew))
}

func presignExpired(at time.Time, expires time.Duration, now time.Time) error {
	return tidemq.Errorf(tidemq.ErrRequestExpired,
		"Request has expired: X-Amz-Date %s plus X-Amz-Expires %d seconds is earlier than %s.",
		at.Format(isoBasic), int64(expires/time.Second), now.Format(isoBasic))
}

func signatureMismatch(canonical, toSign string) error {
	return tidemq.SignatureDoesNotMatch(canonical, toSign)
}
