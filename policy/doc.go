// Package policy is the subset of the IAM policy language that tidemq
// evaluates: identity policies (in the credentials file) and resource
// policies (a queue's or a topic's Policy attribute), decided the way AWS
// decides them.
//
// A Document holds statements of Effect, Principal, Action/NotAction,
// Resource/NotResource and Condition. Actions and resources match with the
// wildcards * (any run of characters) and ? (one character); actions
// ignore case, resources do not. Conditions support the String, Arn, Bool,
// Null and IpAddress operator families with their IfExists variants, over
// the keys listed in SupportedKeys. A statement that needs anything else —
// another operator, another key, a set qualifier — is not guessed at: when
// it applies to a request, the request is denied and the Decision says
// why, so that a policy written for AWS never grants more here than there.
//
// Decide combines an identity policy and a resource policy as AWS does
// (reference_policies_evaluation-logic in the IAM User Guide):
//
//   - an explicit Deny in either policy denies;
//   - within one account, an Allow in either policy allows (a resource
//     policy allows by itself only when it names the principal, not merely
//     its account: naming the account delegates to its identity policies);
//   - across accounts, both must allow: the identity policy of the caller
//     and the resource policy of the owner;
//   - a service principal (sns.amazonaws.com) has no identity policy: the
//     resource policy alone decides;
//   - anything else is denied (the implicit deny).
//
// Organisations' SCPs, permission boundaries, session policies and policy
// variables are not part of this subset.
package policy
