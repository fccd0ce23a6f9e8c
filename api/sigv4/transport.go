package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Transport is the client side of a Verifier for plain HTTP calls: it signs
// every request it sends with SigV4, using the AWS SDK's signer. tidemq's
// commands use it for the admin API (/tidemq/...), which a server with
// --auth verifies like any SQS call.
type Transport struct {
	// Base sends the signed request; nil means http.DefaultTransport.
	Base        http.RoundTripper
	Credentials aws.CredentialsProvider
	// Region and Service make up the credential scope.
	Region, Service string
}

// RoundTrip signs a copy of req and sends it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	creds, err := t.Credentials.Retrieve(ctx)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("sign the request: AWS credentials: %w", err)
	}
	signed := req.Clone(ctx)
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		signed.Body = io.NopCloser(bytes.NewReader(body))
		signed.ContentLength = int64(len(body))
		signed.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, signed, hex.EncodeToString(sum[:]), t.Service, t.Region, time.Now()); err != nil {
		return nil, fmt.Errorf("sign the request: %w", err)
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(signed)
}
