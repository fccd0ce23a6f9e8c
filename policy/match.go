package policy

import "strings"

// Like reports whether s matches pattern, where * stands for any run of
// characters (none included) and ? for exactly one. It is the matching of
// Action, Resource and the String/ArnLike operators. Iterative, with one
// backtrack point: linear in practice, never exponential.
func Like(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchAction reports whether an action pattern ("sqs:Send*", "SQS:*",
// "*") names action ("sqs:SendMessage"): case-insensitive, as AWS.
func matchAction(pattern, action string) bool {
	return Like(strings.ToLower(pattern), strings.ToLower(action))
}

// matchARN is ArnLike: the six colon-separated parts matched one by one,
// each with wildcards (so a * never spans a colon of the first five),
// the last one case-sensitively.
func matchARN(pattern, arn string) bool {
	if pattern == "*" {
		return true
	}
	pp := strings.SplitN(pattern, ":", 6)
	ap := strings.SplitN(arn, ":", 6)
	if len(pp) != 6 || len(ap) != 6 {
		return Like(pattern, arn)
	}
	for i := range pp {
		if !Like(pp[i], ap[i]) {
			return false
		}
	}
	return true
}
