// Package authz decides who may do what on a tidemq started with --auth.
//
// The credentials file (--credentials-file) maps access keys to principals
// (principals.go): in its original forms (AKID:SECRET lines, an AWS
// shared-credentials file) every key is its account's root user and may do
// everything, as before this package existed; in the principals form (a
// YAML document starting with "principals:") each principal has a name,
// an account id and an identity policy in IAM's language (package policy).
// A Store holds the file's current contents and reloads it when it
// changes; a file that no longer parses is refused loudly and the previous
// contents stay in force, so that a typo never locks every client out nor
// opens the server.
//
// An Authorizer decides each call: the principal's identity policy, the
// resource's policy (a queue's or a topic's Policy attribute) and the
// request's context (aws:SourceArn, aws:SourceIp...) go to policy.Decide. A refusal is a
// *tidemq.Error of ErrAccessDenied, which the SQS protocol writes as AWS
// does and the SNS protocol turns into AuthorizationError, and it is written
// to the audit log with the principal, the action, the resource and the
// caller's address.
//
// Invariant: without --auth there is no Store and no Authorizer, and every
// caller is let through without looking anything up (the quick start).
package authz
