package sqs

import (
	"strings"

	"github.com/tidemq/tidemq/api/awsquery"
)

// queryService is SQS's dialect of the Query protocol (package awsquery
// parses the forms and writes the XML envelopes): its namespace, an empty
// <Detail/> in errors, and the values its domain checks itself.
var queryService = &awsquery.Service{Namespace: xmlNamespace, ErrorDetail: true, KeepValue: keptForDomain}

// keptForDomain reports whether a parameter's value is left to the
// domain's checks, which refuse text that is not UTF-8 with their own
// errors (a message body's is InvalidMessageContents): a MessageBody, and
// the StringValue of a MessageAttribute or MessageSystemAttribute. Any
// other value that is not UTF-8 fails the request (awsquery's parser
// answers InvalidParameterValue); JSON does the same (jsontext.go).
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
