package sqs

import "github.com/tidemq/tidemq/api/awsquery"

// newRequestID returns a request id in AWS's form (a version 4 UUID).
var newRequestID = awsquery.NewRequestID
