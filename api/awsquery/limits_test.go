package awsquery

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
)

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestReadBody(t *testing.T) {
	read := func(body io.Reader, length int64) ([]byte, error) {
		r := httptest.NewRequest(http.MethodPost, "/", body)
		if length >= 0 {
			r.ContentLength = length
		}
		return ReadBody(httptest.NewRecorder(), r, 10)
	}
	if b, err := read(strings.NewReader("0123456789"), -1); err != nil || string(b) != "0123456789" {
		t.Errorf("at the limit: %q %v", b, err)
	}
	// Too large by Content-Length, or found so while reading a body that
	// did not say its length.
	for _, length := range []int64{11, -1} {
		_, err := read(strings.NewReader("0123456789x"), length)
		if !tidemq.HasCode(err, tidemq.ErrRequestEntityTooLarge) {
			t.Errorf("length %d: %v", length, err)
		}
	}
	if _, err := read(io.NopCloser(failingReader{}), -1); !tidemq.HasCode(err, tidemq.ErrMalformedInput) {
		t.Errorf("unreadable: %v", err)
	}
	if b, err := ReadBody(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), 10); b != nil || err != nil {
		t.Errorf("no body: %q %v", b, err)
	}
}
