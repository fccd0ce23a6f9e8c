package tidemq

import (
	"log/slog"
	"strings"
)

// Queues per region.
//
// On AWS each region is a namespace of its own: the same queue name in two
// regions is two queues, with two ARNs. A Broker is opened for one account
// and one region, its home region, and names the queues of its home region
// plainly ("orders"). A queue of another region is named
// "<region>/<name>" ("eu-west-1/orders"): RegionalQueueName builds such a
// name and SplitQueueName takes it apart. A Broker treats the part after
// the slash as the queue's name (the name rules, the ARN's resource) and
// the part before as its region (the ARN's region, ListQueues' scope); the
// transports turn the region of a request (its SigV4 credential scope)
// and a queue name into such a name, and back.
//
// So that every queue has one name, a Broker's home region is never
// written out: RegionalQueueName(home, home, "orders") is "orders".

// RegionalQueueName names queue name of region for a Broker whose home
// region is home: name itself in the home region (or when region is ""),
// "<region>/<name>" otherwise. name may be "" or a ListQueues prefix.
func RegionalQueueName(region, home, name string) string {
	if region == "" || region == home {
		return name
	}
	return region + "/" + name
}

// SplitQueueName takes a queue name (or a ListQueues prefix) of a Broker
// whose home region is home apart into its region and its plain name.
func SplitQueueName(qname, home string) (region, name string) {
	if r, n, ok := strings.Cut(qname, "/"); ok {
		return r, n
	}
	return home, qname
}

// ValidRegion reports whether s can be a region name: 1 to 64 characters of
// [a-z0-9-] ("us-east-1", "eu-central-2", a local "dev-1").
func ValidRegion(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// CanonicalQueueName writes a Broker's home region out of a queue name
// ("us-east-1/orders" is "orders" when home is us-east-1), so that each
// queue has one name; any other name is returned as it is.
func CanonicalQueueName(name, home string) string {
	region, plain := SplitQueueName(name, home)
	return RegionalQueueName(region, home, plain)
}

// RegionalQueueARN is the ARN of the queue named name (plainly in the home
// region and account, or "[<region>/][<account>:]<name>", account.go) of a
// Broker of home region and account: it carries the queue's region, its
// account and its plain name.
func RegionalQueueARN(home, account, name string) string {
	region, acct, plain := SplitQualifiedName(name, home, account)
	return QueueARN(region, acct, plain)
}

// QueueNameOfARN is the name, in a Broker of home region and account, of
// the queue an ARN of any region and any account names; ok is false when
// the ARN names no queue (another service, an account that is not 12
// digits, a resource that is no queue name).
func QueueNameOfARN(arn, home, account string) (name string, ok bool) {
	a, ok := ParseARN(arn)
	if !ok || a.Service != "sqs" || !ValidAccount(a.Account) || strings.ContainsAny(a.Resource, "/:") {
		return "", false
	}
	return QualifiedQueueName(a.Region, home, a.Account, account, a.Resource), true
}

// DefaultRegion is a broker's region when its options name none
// (DefaultAccountID, in arn.go, is its account).
const DefaultRegion = "us-east-1"

// BrokerDefaults fills in what a broker's options left out: the system
// clock, DefaultRegion, DefaultAccountID and slog's default logger.
func BrokerDefaults(clock Clock, region, account string, log *slog.Logger) (Clock, string, string, *slog.Logger) {
	if clock == nil {
		clock = SystemClock{}
	}
	if region == "" {
		region = DefaultRegion
	}
	if account == "" {
		account = DefaultAccountID
	}
	if log == nil {
		log = slog.Default()
	}
	return clock, region, account, log
}
