// Package awsquery is the AWS Query protocol as tidemq's SQS and SNS
// endpoints speak it: a request is a form (a POST body, a URL query string,
// or both) of Action=...&Version=... and the members of the action's input,
// answered in XML.
//
// It holds what the two services share and nothing of either's model:
//
//   - reading a request body within a bound (ReadBody);
//   - a bounded form parser (Service.Parse), whose cost grows with the body
//     and never with what the parameter names describe, and which refuses
//     text that is not UTF-8;
//   - the parameters seen as a tree (Node), with the decoders of lists and
//     maps that both services' serialisations are made of: "name.N" items,
//     "name.member.N" and "name.entry.N.key" are all Items of some node;
//   - the XML envelopes of a result and of an error, with the request id
//     (Service.WriteResult, Service.WriteError), and the element writer
//     they are built with (XMLWriter);
//   - request ids (NewRequestID);
//   - the transports' one recover-and-log (Recover): a panic while serving
//     a request is logged with its stack and answered with the protocol's
//     internal error, by SQS (JSON and Query) and SNS alike.
//
// What differs between the services is data in a Service: the XML
// namespace, whether an error carries <Detail/>, which parameter values the
// domain checks itself, and how an invalid parameter and a malformed form
// are worded. Errors are *tidemq.Error values from the catalogue in the
// module root.
package awsquery
