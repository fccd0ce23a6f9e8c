package awsquery

import (
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/tidemq/tidemq"
)

// param is one Query parameter, decoded.
type param struct {
	name, value string
}

// appendForm decodes an application/x-www-form-urlencoded string (a body or
// a URL's query string) and appends its parameters to params, in order.
// It decodes as url.ParseQuery does, and fails where it would fail (a bad
// escape, a ';' separator), but it checks every name against the bounds of
// limits.go before decoding it: a name whose encoding alone is too long is
// rejected without being copied. source (FromBody, FromURL) names the
// form in errors.
func (s *Service) appendForm(params []param, form, source string) ([]param, error) {
	for form != "" {
		var pair string
		pair, form, _ = strings.Cut(form, "&")
		if strings.Contains(pair, ";") {
			return nil, s.malformedForm(source, errors.New("invalid semicolon separator"))
		}
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		// A decoded byte takes at most 3 encoded ones (%XX).
		if len(rawName) > 3*MaxParamNameLength {
			return nil, errParamNameTooLong()
		}
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return nil, s.malformedForm(source, err)
		}
		if err := checkParamName(name); err != nil {
			return nil, err
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return nil, s.malformedForm(source, err)
		}
		if !utf8.ValidString(value) && (s.KeepValue == nil || !s.KeepValue(name)) {
			return nil, s.invalidParameter(name, "it is not valid UTF-8.")
		}
		params = append(params, param{name, value})
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

// checkParamName checks a decoded parameter name against the bounds, and
// that it is UTF-8.
func checkParamName(name string) error {
	if len(name) > MaxParamNameLength {
		return errParamNameTooLong()
	}
	if !utf8.ValidString(name) {
		return tidemq.Errorf(tidemq.ErrInvalidParameterValue, "A parameter name is invalid. Reason: it is not valid UTF-8.")
	}
	if parts := strings.Count(name, ".") + 1; parts > MaxParamDepth {
		return tidemq.Errorf(tidemq.ErrInvalidQueryParameter,
			"The parameter name %s has %d dot-separated parts; at most %d are allowed.", name, parts, MaxParamDepth)
	}
	return nil
}

func errParamNameTooLong() error {
	return tidemq.Errorf(tidemq.ErrInvalidQueryParameter,
		"A parameter name is longer than the limit of %d bytes.", MaxParamNameLength)
}

func errTooManyParams() error {
	return tidemq.Errorf(tidemq.ErrInvalidQueryParameter,
		"The request has more than %d parameters.", MaxParams)
}

// Lookup returns the value of the first parameter called name in a form,
// and whether there is one. It decodes no name longer than name's longest
// encoding and no value but that one's, and skips the pairs it cannot
// decode, so that a router can find a request's Action cheaply in a body
// that has not been checked yet.
func Lookup(form, name string) (string, bool) {
	for form != "" {
		var pair string
		pair, form, _ = strings.Cut(form, "&")
		rawName, rawValue, _ := strings.Cut(pair, "=")
		if len(rawName) > 3*len(name) || strings.Contains(pair, ";") {
			continue
		}
		if n, err := url.QueryUnescape(rawName); err != nil || n != name {
			continue
		}
		if v, err := url.QueryUnescape(rawValue); err == nil {
			return v, true
		}
	}
	return "", false
}
