package sqs

import (
	"bytes"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/tidemq/tidemq"
)

// xmlNamespace is the namespace of every SQS Query response.
const xmlNamespace = "http://queue.amazonaws.com/doc/2012-11-05/"

const xmlProlog = `<?xml version="1.0"?>`

// xmlWriter builds a Query response. Elements are written by hand so that
// the shapes are exactly AWS's: flattened lists and maps (no wrapper
// elements), members in model order.
type xmlWriter struct {
	b bytes.Buffer
}

func (x *xmlWriter) open(name string) {
	x.b.WriteByte('<')
	x.b.WriteString(name)
	x.b.WriteByte('>')
}

func (x *xmlWriter) close(name string) {
	x.b.WriteString("</")
	x.b.WriteString(name)
	x.b.WriteByte('>')
}

// elem writes <name>text</name>.
func (x *xmlWriter) elem(name, text string) {
	x.open(name)
	escapeXML(&x.b, text)
	x.close(name)
}

// optional writes <name>text</name> unless text is empty.
func (x *xmlWriter) optional(name, text string) {
	if text != "" {
		x.elem(name, text)
	}
}

// escapeXML writes s as XML character data the way SQS does: the five
// predefined entities for & < > ", and CR as &#xD; so that it survives
// parsing. Bytes that are not UTF-8, and characters XML 1.0 cannot carry at
// all, become U+FFFD, so the document stays well formed whatever an error
// message quotes back.
func escapeXML(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\r':
			b.WriteString("&#xD;")
		case r == utf8.RuneError && size == 1, !xmlChar(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}

// xmlChar reports whether XML 1.0 allows r in a document.
func xmlChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// writeXMLOutput writes a successful Query response:
// <XResponse><XResult>…</XResult><ResponseMetadata>…</ResponseMetadata></XResponse>.
// Actions without output have no Result element; an output with no members
// is the empty element <XResult/>.
func (c *call) writeXMLOutput(w http.ResponseWriter, out output) int {
	var x xmlWriter
	x.b.WriteString(xmlProlog)
	x.b.WriteString("<" + c.action + `Response xmlns="` + xmlNamespace + `">`)
	if out != nil {
		var inner xmlWriter
		out.writeXML(&inner)
		if inner.b.Len() == 0 {
			x.b.WriteString("<" + c.action + "Result/>")
		} else {
			x.open(c.action + "Result")
			x.b.Write(inner.b.Bytes())
			x.close(c.action + "Result")
		}
	}
	x.open("ResponseMetadata")
	x.elem("RequestId", c.requestID)
	x.close("ResponseMetadata")
	x.close(c.action + "Response")
	return c.writeXMLBody(w, http.StatusOK, x.b.Bytes())
}

// writeXMLError writes a Query error response. RequestId is a sibling of
// Error, not inside ResponseMetadata.
func (c *call) writeXMLError(w http.ResponseWriter, e *tidemq.Error) int {
	var x xmlWriter
	x.b.WriteString(xmlProlog)
	x.b.WriteString(`<ErrorResponse xmlns="` + xmlNamespace + `">`)
	x.open("Error")
	x.elem("Type", string(e.Code.Fault))
	x.elem("Code", e.Code.Code)
	x.elem("Message", queryMessage(e))
	x.b.WriteString("<Detail/>")
	x.close("Error")
	x.elem("RequestId", c.requestID)
	x.close("ErrorResponse")
	return c.writeXMLBody(w, e.Code.Status, x.b.Bytes())
}

func (c *call) writeXMLBody(w http.ResponseWriter, status int, body []byte) int {
	c.setCommonHeaders(w, "text/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status
}
