package tidemq

import "strings"

// Queues per account.
//
// On AWS each account is a namespace of its own, as each region is: the
// same queue name in two accounts is two queues, with two URLs and two
// ARNs. A Broker is opened for one account, its home account (the
// server's --account-id), and names the queues of its home account
// plainly ("orders"), so that a store written before accounts existed is
// read as it is. A queue of another account is named "<account>:<name>"
// ("111122223333:orders"): ':' never occurs in a queue name, so the two
// kinds of names cannot collide. With a region (region.go) the region
// comes first: "eu-west-1/111122223333:orders".
//
// A Broker treats the part after the colon as the queue's name (the name
// rules, the ARN's resource) and the part before as its account (the
// ARN's account, ListQueues' scope); the transports turn the account of a
// caller (its principal, package authz) or of a queue URL into such a
// name, and back. So that every queue has one name, the home account is
// never written out.

// AccountQueueName names queue name of account for a Broker whose home
// account is home: name itself in the home account (or when account is
// ""), "<account>:<name>" otherwise. name may be "" or a ListQueues
// prefix, and must not name a region (QualifiedQueueName does both).
func AccountQueueName(account, home, name string) string {
	if account == "" || account == home {
		return name
	}
	return account + ":" + name
}

// SplitAccountName takes a queue name without its region (SplitQueueName's
// plain part) apart into its account and its plain name.
func SplitAccountName(name, home string) (account, plain string) {
	if a, n, ok := strings.Cut(name, ":"); ok {
		return a, n
	}
	return home, name
}

// QualifiedQueueName names queue name of region and account for a Broker
// of home region and home account: "[<region>/][<account>:]<name>", each
// part left out when it is the Broker's own.
func QualifiedQueueName(region, homeRegion, account, homeAccount, name string) string {
	return RegionalQueueName(region, homeRegion, AccountQueueName(account, homeAccount, name))
}

// SplitQualifiedName takes a Broker's queue name (or a ListQueues prefix)
// apart into its region, its account and its plain name.
func SplitQualifiedName(qname, homeRegion, homeAccount string) (region, account, name string) {
	region, rest := SplitQueueName(qname, homeRegion)
	account, name = SplitAccountName(rest, homeAccount)
	return region, account, name
}

// ValidAccount reports whether s can be an account id: 12 digits.
func ValidAccount(s string) bool {
	if len(s) != 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validQualifiers checks the region and account parts of a queue name
// given to a Broker, and returns its plain name.
func validQualifiers(qname string) (plain string, ok bool) {
	plain = qname
	if region, rest, cut := strings.Cut(plain, "/"); cut {
		if !ValidRegion(region) {
			return "", false
		}
		plain = rest
	}
	if account, rest, cut := strings.Cut(plain, ":"); cut {
		if !ValidAccount(account) {
			return "", false
		}
		plain = rest
	}
	return plain, true
}
