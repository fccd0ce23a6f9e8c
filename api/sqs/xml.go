package sqs

import (
	"net/http"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/awsquery"
)

// xmlNamespace is the namespace of every SQS Query response.
const xmlNamespace = "http://queue.amazonaws.com/doc/2012-11-05/"

// xmlWriter is an awsquery.XMLWriter under the names the outputs'
// writeXML methods use.
type xmlWriter awsquery.XMLWriter

func (x *xmlWriter) w() *awsquery.XMLWriter { return (*awsquery.XMLWriter)(x) }

func (x *xmlWriter) open(name string)  { x.w().Open(name) }
func (x *xmlWriter) close(name string) { x.w().Close(name) }

// elem writes <name>text</name>.
func (x *xmlWriter) elem(name, text string) { x.w().Elem(name, text) }

// optional writes <name>text</name> unless text is empty.
func (x *xmlWriter) optional(name, text string) { x.w().Optional(name, text) }

// writeXMLOutput writes a successful Query response (awsquery's envelope
// around the output's members).
func (c *call) writeXMLOutput(w http.ResponseWriter, out output) int {
	var result *awsquery.XMLWriter
	if out != nil {
		var inner xmlWriter
		out.writeXML(&inner)
		result = inner.w()
	}
	return queryService.WriteResult(w, c.action, c.requestID, result)
}

// writeXMLError writes a Query error response, worded as the Query
// protocol words it.
func (c *call) writeXMLError(w http.ResponseWriter, e *tidemq.Error) int {
	return queryService.WriteError(w, c.requestID, &tidemq.Error{Code: e.Code, Message: queryMessage(e)})
}
