package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sigv4"
	apisns "github.com/tidemq/tidemq/api/sns"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/authz"
	topicstore "github.com/tidemq/tidemq/sns"
)

// ProtocolOptions are what the SQS and SNS protocol handlers are built on.
type ProtocolOptions struct {
	Broker    tidemq.Broker       // the queues (metrics.Broker's wrapper in the binary)
	Topics    *topicstore.Service // the topics
	Region    string              // home region
	AccountID string
	PublicURL string            // base of queue URLs; "" means each request's Host
	Auth      sqs.Authenticator // nil: requests are not authenticated
	// Authorizer decides permissions (--auth; package authz); nil: every
	// call is allowed.
	Authorizer *authz.Authorizer
	Logger     *slog.Logger
	// Observe is called once per answered SQS or SNS request (metrics);
	// may be nil.
	Observe func(action, code string, status int, d time.Duration)
	// Regions reports whether a region other than Region may be asked
	// for (--regions); nil means AWS's regions (sqs.Config.Regions).
	Regions func(region string) bool
}

// Protocols is the handler of the wire protocols: SNS requests (told apart
// by apisns.Route) to the topic service, everything else to SQS. With a
// SigV4 verifier, SNS requests are verified for the "sns" signing scope.
func Protocols(o ProtocolOptions) http.Handler {
	sc := sqs.Config{
		Broker: o.Broker, Region: o.Region, AccountID: o.AccountID, PublicURL: o.PublicURL, Auth: o.Auth, Logger: o.Logger,
		Observe: o.Observe, Regions: o.Regions,
	}
	nc := apisns.Config{Service: o.Topics, PublicURL: o.PublicURL, Auth: snsAuth(o.Auth), Logger: o.Logger, Observe: o.Observe}
	if o.Authorizer != nil { // a nil *authz.Authorizer must not become a non-nil interface
		sc.Authorizer, nc.Authorize, nc.Allowed = o.Authorizer, o.Authorizer.Authorize, o.Authorizer.Allowed
		sc.CallerAccount, nc.CallerAccount = o.Authorizer.CallerAccount, o.Authorizer.CallerAccount
	}
	return apisns.Route(apisns.NewHandler(nc), sqs.NewHandler(sc))
}

// snsAuth is the SQS authenticator accepting the "sns" signing scope.
func snsAuth(auth sqs.Authenticator) apisns.Authenticator {
	switch v := auth.(type) {
	case *sigv4.Verifier:
		return v.ForServices("sns")
	case *authz.Authenticator:
		return v.ForServices("sns")
	}
	return auth
}

// ConsoleSQS is the SQS handler the web console redrives through
// (console.Options.SQS): the same broker and queue URLs as Protocols, no
// authenticator (the console API in front of it is an admin route) and no
// request metrics (the console's requests are not clients').
func ConsoleSQS(o ProtocolOptions) http.Handler {
	return sqs.NewHandler(sqs.Config{Broker: o.Broker, Region: o.Region, AccountID: o.AccountID, PublicURL: o.PublicURL,
		Logger: o.Logger, Regions: o.Regions})
}
