package sqs

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/tidemq/tidemq"
)

// qparam is one Query parameter, decoded.
type qparam struct {
	name, value string
}

// appendForm decodes an application/x-www-form-urlencoded string (a body or
// a URL's query string) and appends its parameters to params, in order.
// It decodes as url.ParseQuery does, and fails where it would fail (a bad
// escape, a ';' separator), but it checks every name against the bounds of
// limits.go before decoding it: a name whose encoding alone is too long is
// rejected without being copied. what names the source in errors ("The
// request body", "The query string").
func appendForm(params []qparam, form, what string) ([]qparam, error) {
	for form != "" {
		var pair string
		pair, form, _ = strings.Cut(form, "&")
		if strings.Contains(pair, ";") {
			return nil, tidemq.Errorf(tidemq.ErrMalformedInput, "%s is not a valid form: invalid semicolon separator", what)
		}
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		// A decoded byte takes at most 3 encoded ones (%XX).
		if len(rawName) > 3*MaxQueryParamNameLength {
			return nil, errParamNameTooLong()
		}
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return nil, tidemq.Errorf(tidemq.ErrMalformedInput, "%s is not a valid form: %v", what, err)
		}
		if err := checkParamName(name); err != nil {
			return nil, err
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return nil, tidemq.Errorf(tidemq.ErrMalformedInput, "%s is not a valid form: %v", what, err)
		}
		if !utf8.ValidString(value) && !keptForDomain(name) {
			return nil, tidemq.Errorf(tidemq.ErrInvalidParameterValue,
				"Value for parameter %s is invalid. Reason: it is not valid UTF-8.", name)
		}
		params = append(params, qparam{name, value})
	}
	return params, nil
}

// countParams is the number of parameters the forms can hold at most: their
// '&'-separated pairs, empty ones included. It reads without allocating.
func countParams(forms ...string) int {
	n := 0
	for _, f := range forms {
		if f != "" {
			n += strings.Count(f, "&") + 1
		}
	}
	return n
}

// keptForDomain reports whether a parameter's value is left to the
// domain's checks, which refuse text that is not UTF-8 with their own
// errors (a message body's is InvalidMessageContents): a MessageBody, and
// the StringValue of a MessageAttribute or MessageSystemAttribute. Any
// other value that is not UTF-8 fails the request (appendForm); JSON does
// the same (jsontext.go).
func keptForDomain(name string) bool {
	if name == "MessageBody" || strings.HasSuffix(name, ".MessageBody") {
		return true
	}
	rest, ok := strings.CutSuffix(name, ".Value.StringValue")
	if i := strings.LastIndexByte(rest, '.'); ok && i >= 0 {
		rest = rest[:i] // the attribute's index
		for _, list := range []string{"MessageAttribute", "MessageSystemAttribute"} {
			if rest == list || strings.HasSuffix(rest, "."+list) {
				return true
			}
		}
	}
	return false
}

// checkParamName checks a decoded parameter name against the bounds, and
// that it is UTF-8.
func checkParamName(name string) error {
	if len(name) > MaxQueryParamNameLength {
		return errParamNameTooLong()
	}
	if !utf8.ValidString(name) {
		return tidemq.Errorf(tidemq.ErrInvalidParameterValue, "A parameter name is invalid. Reason: it is not valid UTF-8.")
	}
	if parts := strings.Count(name, ".") + 1; parts > MaxQueryParamDepth {
		return tidemq.Errorf(tidemq.ErrInvalidQueryParameter,
			"The parameter name %s has %d dot-separated parts; at most %d are allowed.", name, parts, MaxQueryParamDepth)
	}
	return nil
}

func errParamNameTooLong() error {
	return tidemq.Errorf(tidemq.ErrInvalidQueryParameter,
		"A parameter name is longer than the limit of %d bytes.", MaxQueryParamNameLength)
}

func errTooManyParams() error {
	return tidemq.Errorf(tidemq.ErrInvalidQueryParameter,
		"The request has more than %d parameters.", MaxQueryParams)
}
