// Package sigv4 verifies AWS Signature Version 4 on incoming requests, the
// server side of what the AWS SDKs do when they sign a call to SQS or SNS.
//
// A Verifier checks both forms a client can use: the Authorization header
// ("AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…" plus
// X-Amz-Date or Date) and the presigned query string (X-Amz-Algorithm,
// X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders,
// X-Amz-Signature). It rebuilds the canonical request the way the non-S3
// services do, derives the signing key from the secret it knows for the
// access key id, and compares signatures in constant time. Failures are
// *tidemq.Error values from the root package's catalogue, so the protocol
// codecs in api/ can send them as they send any other error.
//
// # Checks and the errors they produce
//
// The checks run in the order AWS's own front end (Coral) runs them, as
// recorded against real services, so that a request with several faults
// gets the error AWS would give:
//
//  1. No Authorization header starting with "AWS4-" and no presigned query
//     parameters: MissingAuthenticationToken, "Request is missing
//     Authentication Token". A header of another scheme (Basic, Bearer,
//     SigV2's "AWS AKID:sig") counts as no signature.
//  2. Missing Credential, SignedHeaders or Signature, or neither X-Amz-Date
//     nor Date: IncompleteSignature, AWS's "Authorization header requires
//     'Credential' parameter. … Authorization=<header>" (for the presigned
//     form: "AWS query-string parameters must include 'X-Amz-Date'. …
//     Re-examine the query-string parameters."). A header element without
//     '=' or given twice is IncompleteSignature too.
//  3. A date that is not ISO 8601 basic format (20060102T150405Z; the Date
//     header may also use the HTTP date format): IncompleteSignature.
//     An X-Amz-Expires that is not a whole number of seconds in
//     [0, 604800]: IncompleteSignature.
//  4. Clock skew beyond MaxSkew: SignatureDoesNotMatch with AWS's "Signature
//     expired: <date> is now earlier than <now-skew> (<now> - 5 min.)" or
//     "Signature not yet current: <date> is still later than <now+skew>
//     (<now> + 5 min.)". SQS answers skew with SignatureDoesNotMatch, not
//     RequestExpired. A presigned request is instead valid from X-Amz-Date
//     until X-Amz-Date + X-Amz-Expires (a date in the future is still limited
//     by MaxSkew). Once that has passed it gets RequestExpired. With no
//     X-Amz-Expires, a presigned request follows the MaxSkew rule, as STS
//     does.
//  5. "host" missing from SignedHeaders: SignatureDoesNotMatch, "'Host' or
//     ':authority' must be a 'SignedHeader' in the AWS Authorization."
//  6. An algorithm other than AWS4-HMAC-SHA256: IncompleteSignature.
//  7. A Credential that is not five slash-separated parts: IncompleteSignature.
//  8. A credential scope that does not fit: SignatureDoesNotMatch, with each
//     fault in AWS's words, joined by spaces: an empty region, a service not
//     in Verifier.Services, a terminator other than aws4_request, or a scope
//     date that differs from the request date. Any non-empty region is
//     accepted, because a self-hosted server has no regions of its own.
//  9. An unknown access key id: InvalidClientTokenId, "The security token
//     included in the request is invalid."
//  10. The signature: SignatureDoesNotMatch with AWS's message. As AWS does,
//     the message then gives the canonical request and the string to sign
//     the server computed, so that a client author can see the difference.
//
// # Payload hash
//
// The payload hash in the canonical request is always hex(SHA-256(body))
// computed here, as the non-S3 services do. An x-amz-content-sha256 header
// that holds a hex digest must equal that hash, or the request fails with
// SignatureDoesNotMatch. UNSIGNED-PAYLOAD and the STREAMING-* values are
// not honoured: a request signed with them fails the signature check. An
// unsigned payload would let anyone on the path rewrite message bodies.
//
// # Canonicalisation
//
// The canonical URI is the path as it came over the wire
// (URL.EscapedPath, which keeps RawPath), URI-encoded once more, as the
// non-S3 services and the SDK signers do. Query parameters are decoded
// ('+' is a space), then RFC 3986 encoded and sorted by encoded name, then
// value. So equivalent spellings of the same query verify alike. The
// signed headers are taken in the order SignedHeaders lists them. Names are
// matched without regard to case. Each value is trimmed and its runs of
// spaces and tabs are collapsed. The values of a repeated header are joined
// with ','. "host" (and ":authority") is Request.Host, since net/http moves
// the Host header out of Request.Header. A signed content-length missing from
// the header map comes from Request.ContentLength.
//
// Session tokens (X-Amz-Security-Token) are accepted for any known access
// key. They are covered by the signature like any other header or parameter,
// but not validated.
package sigv4
