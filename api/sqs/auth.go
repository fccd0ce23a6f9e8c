package sqs

import (
	"strings"
)

// authenticate checks the request's signature with Config.Auth and returns
// the access key it was signed with. Without an Authenticator every request
// is accepted, and the access key is read from the credential scope of the
// Authorization header or the X-Amz-Credential query parameter.
func (c *call) authenticate(body []byte) (string, error) {
	if c.h.cfg.Auth != nil {
		return c.h.cfg.Auth.Authenticate(c.r, body)
	}
	if a := c.r.Header.Get("Authorization"); a != "" {
		return accessKeyOf(a, ""), nil
	}
	return accessKeyOf("", c.r.URL.Query().Get("X-Amz-Credential")), nil
}

// accessKeyOf extracts the access key id from a SigV4 Authorization header
// ("AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, ...")
// or from a presigned request's X-Amz-Credential ("AKID/date/...").
func accessKeyOf(authorization, credential string) string {
	if _, rest, ok := strings.Cut(authorization, "Credential="); ok {
		credential = rest
	}
	key, _, _ := strings.Cut(credential, "/")
	key, _, _ = strings.Cut(key, ",")
	return strings.TrimSpace(key)
}
