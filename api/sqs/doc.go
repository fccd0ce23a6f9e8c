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
// The package only translates: it resolves queue URLs to queue names (an
// absent QueueUrl, or one of another account, is its to refuse), decodes
// parameters (a member of the wrong type is its to refuse; an absent
// optional number stays nil, not 0) and maps tidemq.Error values to each
// protocol's error shape. Every rule about what a request may ask (required
// members, ranges, batch entry ids and sizes) is the Broker's: a Broker
// validates its params (tidemq.Broker), so every backend refuses the same
// requests with the same codes and messages, and this package checks none
// of them twice.
package sqs
