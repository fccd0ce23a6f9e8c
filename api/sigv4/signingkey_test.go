package sigv4

import (
	"encoding/hex"
	"testing"
)

// The key-derivation example from AWS's SigV4 documentation (reference §3).
func TestSigningKeyVector(t *testing.T) {
	got := hex.EncodeToString(signingKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830", "us-east-1", "iam"))
	const want = "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"
	if got != want {
		t.Fatalf("signing key = %s, want %s", got, want)
	}
}

func TestHashHexEmpty(t *testing.T) {
	const want = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if got := hashHex(nil); got != want {
		t.Fatalf("hashHex(nil) = %s, want %s", got, want)
	}
}
