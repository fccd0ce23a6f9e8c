package sns

import (
	"fmt"
	"runtime"
	"sync"
)

// Signing notifications. The string AWS signs for a Notification —
// Message, MessageId, Subject, Timestamp, TopicArn and Type — names no
// subscription (UnsubscribeURL, the one field that does, is not signed), so
// every delivery of one publish that gets the same message text carries
// the same signature. Invariant: a record is signed at most once per
// distinct message text (a MessageStructure=json publish may give SQS and
// HTTP subscribers different texts) and per SignatureVersion, and every
// envelope of the record reuses that signature.
//
// A fan-out's signatures are started on the signing pool (at most
// GOMAXPROCS at a time) before its outbox write, and computed while that
// write is made durable (presign); otherwise the first delivery that needs
// the signature computes it and the others wait for it on the record's
// lock.

// SignMode says which envelopes carry a signature.
type SignMode string

const (
	// SignAll signs every envelope of a standard topic, as AWS does. The
	// default.
	SignAll SignMode = "all"
	// SignHTTPOnly signs only the envelopes posted to HTTP/HTTPS
	// endpoints: envelopes delivered to SQS queues leave out
	// SignatureVersion, Signature and SigningCertURL (as FIFO topics' do).
	// For deployments whose queue consumers never verify signatures: it
	// saves an RSA signature per publish, but a consumer that does verify
	// rejects those envelopes.
	SignHTTPOnly SignMode = "http-only"
)

// ParseSignMode checks a --sns-sign value.
func ParseSignMode(v string) (SignMode, error) {
	switch SignMode(v) {
	case "", SignAll:
		return SignAll, nil
	case SignHTTPOnly:
		return SignHTTPOnly, nil
	}
	return "", fmt.Errorf("the signing mode must be %q or %q, not %q", SignAll, SignHTTPOnly, v)
}

// signs reports whether an envelope of r delivered to a subscription of
// protocol carries a signature.
func (s *Service) signs(r *record, protocol string) bool {
	if r.FIFO {
		return false
	}
	return s.opt.Signing != SignHTTPOnly || protocol == "http" || protocol == "https"
}

// signatures is a record's signature cache: message text → signature.
type signatures struct {
	mu  sync.Mutex
	sig map[string]string
}

// signature returns the signature of r's notification with message text
// msg, computing it the first time.
func (s *Service) signature(r *record, msg string) (string, error) {
	r.sigs.mu.Lock()
	defer r.sigs.mu.Unlock()
	if sig, ok := r.sigs.sig[msg]; ok {
		return sig, nil
	}
	s.signPool <- struct{}{}
	sig, err := s.signer.sign(signatureVersion(r.SignatureVersion),
		stringToSign(msg, r.MessageID, r.Subject, r.Timestamp, r.TopicARN, typeNotification))
	<-s.signPool
	if err != nil {
		return "", err
	}
	s.stats.signatures.Add(1)
	if r.sigs.sig == nil {
		r.sigs.sig = make(map[string]string, 1)
	}
	r.sigs.sig[msg] = sig
	return sig, nil
}

// signPool bounds the signatures computed at once to the CPUs.
type signPool chan struct{}

func newSignPool() signPool { return make(signPool, runtime.GOMAXPROCS(0)) }

// presign starts signing, on the pool, every distinct message text that
// recs' deliveries will need, so that a fan-out's signature is computed
// while its outbox write is made durable rather than after it; a delivery
// that needs a signature still being computed waits for it on the record's
// lock (signature). subs are the topic's subscriptions.
func (s *Service) presign(recs []*record, subs []*Subscription) {
	bySub := make(map[string]*Subscription, len(subs))
	for _, sub := range subs {
		bySub[sub.ARN] = sub
	}
	for _, r := range recs {
		seen := map[string]bool{}
		for _, d := range r.deliveries {
			sub := bySub[d.sub]
			if sub == nil || sub.Attributes["RawMessageDelivery"] == "true" || !s.signs(r, sub.Protocol) {
				continue
			}
			msg := r.message(sub.Protocol)
			if seen[msg] {
				continue
			}
			seen[msg] = true
			go func() { _, _ = s.signature(r, msg) }()
		}
	}
}
