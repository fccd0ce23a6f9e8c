package awsquery

import (
	"bytes"
	"unicode/utf8"
)

// XMLWriter builds a Query response. Elements are written by hand so that
// the shapes are exactly AWS's: flattened lists and maps where the service
// flattens them, members in model order.
type XMLWriter struct {
	b bytes.Buffer
}

// Open writes <name>.
func (x *XMLWriter) Open(name string) {
	x.b.WriteByte('<')
	x.b.WriteString(name)
	x.b.WriteByte('>')
}

// Close writes </name>.
func (x *XMLWriter) Close(name string) {
	x.b.WriteString("</")
	x.b.WriteString(name)
	x.b.WriteByte('>')
}

// Elem writes <name>text</name>.
func (x *XMLWriter) Elem(name, text string) {
	x.Open(name)
	escapeXML(&x.b, text)
	x.Close(name)
}

// Optional writes <name>text</name> unless text is empty.
func (x *XMLWriter) Optional(name, text string) {
	if text != "" {
		x.Elem(name, text)
	}
}

// Raw writes b, which must be well-formed XML content, as it is.
func (x *XMLWriter) Raw(b []byte) { x.b.Write(b) }

// Len is the number of bytes written.
func (x *XMLWriter) Len() int { return x.b.Len() }

// Bytes returns what was written.
func (x *XMLWriter) Bytes() []byte { return x.b.Bytes() }

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
