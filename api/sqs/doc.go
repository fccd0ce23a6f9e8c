// Package sqs is tidemq's Amazon SQS endpoint: an http.Handler that speaks
// both wire protocols an SQS client may use and calls a tidemq.Broker.
//
// The AWS JSON 1.0 protocol (what current SDKs and the AWS CLI use) is
// recognised by the X-Amz-Target header "AmazonSQS.<Action>"; everything
// else is the legacy Query protocol (form POST or GET with Action=...,
// answered in XML). Both decode into the same per-action input structs, run
// the same action code and encode the same output structs, so the two
// protocols cannot drift apart.
//
// The package only translates: it resolves queue URLs to queue names,
// decodes parameters, checks what is purely a matter of the protocol
// (required members, types, the ranges AWS checks before it looks at a
// queue, batch entry ids and batch size) and maps tidemq.Error values to
// each protocol's error shape. Every domain rule is the Broker's.
package sqs
