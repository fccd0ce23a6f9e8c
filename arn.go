package tidemq

import (
	"fmt"
	"strings"
)

// DefaultAccountID is the account of queue URLs and ARNs when none is
// configured: twelve zeros, as local AWS emulators use.
const DefaultAccountID = "000000000000"

// QueueARN returns the ARN of a queue: arn:aws:sqs:<region>:<account>:<name>.
func QueueARN(region, account, name string) string {
	return fmt.Sprintf("arn:aws:sqs:%s:%s:%s", region, account, name)
}

// ARN is a parsed Amazon Resource Name.
type ARN struct {
	Partition, Service, Region, Account, Resource string
}

// String formats the ARN.
func (a ARN) String() string {
	return "arn:" + a.Partition + ":" + a.Service + ":" + a.Region + ":" + a.Account + ":" + a.Resource
}

// ParseARN splits an ARN into its six parts. It reports false for anything
// that is not arn:partition:service:region:account:resource.
//
// It allocates nothing (the parts are substrings of s): every SNS delivery
// parses its queue's ARN.
func ParseARN(s string) (ARN, bool) {
	var parts [6]string
	for i := range 5 {
		p, rest, ok := strings.Cut(s, ":")
		if !ok {
			return ARN{}, false
		}
		parts[i], s = p, rest
	}
	parts[5] = s
	if parts[0] != "arn" || parts[1] == "" || parts[2] == "" || parts[5] == "" {
		return ARN{}, false
	}
	return ARN{Partition: parts[1], Service: parts[2], Region: parts[3], Account: parts[4], Resource: parts[5]}, true
}
