package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// terminator ends every SigV4 credential scope.
const terminator = "aws4_request"

// algorithm is the only signing algorithm SigV4 defines for HMAC.
const algorithm = "AWS4-HMAC-SHA256"

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// signingKey derives kSigning from the secret access key and the credential
// scope: HMAC("AWS4"+secret, date) → region → service → "aws4_request".
func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, terminator)
}

// sign returns the hex signature of stringToSign under key.
func sign(key []byte, stringToSign string) string {
	return hex.EncodeToString(hmacSHA256(key, stringToSign))
}

// hashHex returns the lower-case hex SHA-256 of b.
func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
