package sns

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// CertPath is the URL path at which the signing certificate is served.
const CertPath = "/SimpleNotificationService-tidemq.pem"

// signer signs notifications with an RSA key whose self-signed certificate
// tidemq serves at CertPath.
type signer struct {
	key     *rsa.PrivateKey
	certPEM []byte
}

// loadSigner reads the key and certificate from keys, or generates and
// stores them. The key is kept, so that the certificate subscribers
// fetched from SigningCertURL still verifies after a restart.
func loadSigner(keys KeyStore) (*signer, error) {
	b, err := keys.SigningKey()
	if err != nil {
		return nil, fmt.Errorf("sns: read the signing key: %w", err)
	}
	if b != nil {
		return parseSigner(b)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "sns.tidemq.local", Organization: []string{"tidemq"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(20, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if b, err = keys.StoreSigningKey(append(keyPEM, certPEM...)); err != nil {
		return nil, fmt.Errorf("sns: store the signing key: %w", err)
	}
	return parseSigner(b)
}

func parseSigner(b []byte) (*signer, error) {
	s := &signer{}
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		switch blk.Type {
		case "RSA PRIVATE KEY":
			k, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("sns: signing key: %w", err)
			}
			s.key = k
		case "CERTIFICATE":
			s.certPEM = pem.EncodeToMemory(blk)
		}
	}
	if s.key == nil || s.certPEM == nil {
		return nil, errors.New("sns: the signing key must hold an RSA PRIVATE KEY and a CERTIFICATE")
	}
	return s, nil
}

// sign signs the string to sign: SHA1withRSA for version "1", SHA256withRSA
// for "2".
func (s *signer) sign(version, stringToSign string) (string, error) {
	var sig []byte
	var err error
	if version == "2" {
		h := sha256.Sum256([]byte(stringToSign))
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, h[:])
	} else {
		h := sha1.Sum([]byte(stringToSign))
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA1, h[:])
	}
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// stringToSign builds the notification string to sign: Message, MessageId,
// Subject (if any), Timestamp, TopicArn and Type, each key and value
// followed by a newline.
func stringToSign(message, messageID, subject, timestamp, topicARN, typ string) string {
	s := "Message\n" + message + "\nMessageId\n" + messageID + "\n"
	if subject != "" {
		s += "Subject\n" + subject + "\n"
	}
	return s + "Timestamp\n" + timestamp + "\nTopicArn\n" + topicARN + "\nType\n" + typ + "\n"
}
