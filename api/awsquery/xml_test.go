package awsquery

import (
	"bytes"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/tidemq/tidemq"
)

func TestEscapeXMLKeepsDocumentWellFormed(t *testing.T) {
	var b bytes.Buffer
	escapeXML(&b, "ok\x00\x01\xff\ufffe\U0001F600\t")
	if got, want := b.String(), "ok\ufffd\ufffd\ufffd\ufffd\U0001F600\t"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestEnvelopes(t *testing.T) {
	s := &Service{Namespace: "urn:ns"}
	result := func(content string) *XMLWriter {
		var x XMLWriter
		x.Raw([]byte(content))
		return &x
	}
	const meta = `<ResponseMetadata><RequestId>id-1</RequestId></ResponseMetadata>`
	tests := []struct {
		name   string
		result *XMLWriter
		want   string
	}{
		{"no result", nil, `<?xml version="1.0"?><DoResponse xmlns="urn:ns">` + meta + `</DoResponse>`},
		{"an empty result", result(""), `<?xml version="1.0"?><DoResponse xmlns="urn:ns"><DoResult/>` + meta + `</DoResponse>`},
		{"a result", result("<A>1</A>"), `<?xml version="1.0"?><DoResponse xmlns="urn:ns"><DoResult><A>1</A></DoResult>` + meta + `</DoResponse>`},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		if status := s.WriteResult(rec, "Do", "id-1", tt.result); status != 200 || rec.Code != 200 || rec.Body.String() != tt.want {
			t.Errorf("%s: %d %s\nwant %s", tt.name, status, rec.Body.String(), tt.want)
		}
		if h := rec.Header(); h.Get("Content-Type") != "text/xml" || h.Get("X-Amzn-Requestid") != "id-1" || h.Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
			t.Errorf("%s: headers %v", tt.name, h)
		}
	}

	e := tidemq.Errorf(tidemq.ErrInternalFailure, `a "quoted" <message> & more`)
	for _, detail := range []bool{false, true} {
		s.ErrorDetail = detail
		want := `<?xml version="1.0"?><ErrorResponse xmlns="urn:ns"><Error><Type>Receiver</Type><Code>InternalFailure</Code>` +
			`<Message>a &quot;quoted&quot; &lt;message&gt; &amp; more</Message>`
		if detail {
			want += `<Detail/>`
		}
		want += `</Error><RequestId>id-1</RequestId></ErrorResponse>`
		rec := httptest.NewRecorder()
		if status := s.WriteError(rec, "id-1", e); status != 500 || rec.Code != 500 || rec.Body.String() != want {
			t.Errorf("detail %v: %d %s\nwant %s", detail, status, rec.Body.String(), want)
		}
	}
}
