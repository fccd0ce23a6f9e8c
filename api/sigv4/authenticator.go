package sigv4

import "net/http"

// Authenticator checks a request's signature. body is the full request
// body. It returns the access key the request was signed with, or a
// *tidemq.Error (MissingAuthenticationToken, InvalidClientTokenId,
// SignatureDoesNotMatch, ...). Verifier is one; the SQS and SNS handlers
// and the front door each take one (their Authenticator is this type).
type Authenticator interface {
	Authenticate(r *http.Request, body []byte) (accessKey string, err error)
}
