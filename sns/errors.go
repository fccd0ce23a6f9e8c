package sns

import (
	"errors"
	"fmt"

	"github.com/tidemq/tidemq"
)

// The topic service's errors are *tidemq.Error values with the SNS entries
// of the error catalogue (tidemq.ErrSNS*); the functions here word the
// common ones as SNS does.

// InvalidParameter is SNS's InvalidParameter error (400) in its usual
// shape: "Invalid parameter: P" or "Invalid parameter: P Reason: R".
func InvalidParameter(param, reason string) *tidemq.Error {
	if reason == "" {
		return tidemq.MsgSNSInvalidParameter.New(param)
	}
	return tidemq.MsgSNSInvalidParameterReason.New(param, reason)
}

// ShortARN is the InvalidParameter error for an ARN value of param with n
// (fewer than 6) elements.
func ShortARN(param string, n int) *tidemq.Error {
	return InvalidParameter(param, fmt.Sprintf(tidemq.ReasonSNSShortARN, n))
}

// SubscriptionNotFound is the NotFound error for a subscription that does
// not exist.
func SubscriptionNotFound() *tidemq.Error { return tidemq.MsgSNSSubscriptionNotFound.New() }

// TopicExists is CreateTopic's error for a name taken by a topic with
// other attributes.
func TopicExists() *tidemq.Error { return InvalidParameter("Attributes", tidemq.ReasonSNSTopicExists) }

// InternalFault is SNS's InternalError for a failure the client is not
// told about (a bug, a store's error).
func InternalFault() *tidemq.Error { return tidemq.MsgSNSInternalError.New() }

// NotDurable is the InternalError of a publish whose record could not be
// written durably.
func NotDurable() *tidemq.Error { return tidemq.MsgSNSNotDurable.New() }

// NotFound is SNS's NotFound error (404).
func NotFound(msg string) *tidemq.Error {
	return &tidemq.Error{Code: tidemq.ErrSNSNotFound, Message: msg}
}

// ResourceNotFound is the tagging actions' error for a topic that does not
// exist (404).
func ResourceNotFound(msg string) *tidemq.Error {
	return &tidemq.Error{Code: tidemq.ErrSNSResourceNotFound, Message: msg}
}

// TagLimitExceeded is returned when a topic would have more than MaxTags
// tags (400).
func TagLimitExceeded() *tidemq.Error {
	return tidemq.MsgSNSTagLimitExceeded.New()
}

// InternalError is a server fault (500).
func InternalError(msg string) *tidemq.Error {
	return &tidemq.Error{Code: tidemq.ErrSNSInternalError, Message: msg}
}

// AuthorizationError is SNS's 403 for a request that lacks the
// authentication it needs.
func AuthorizationError(msg string) *tidemq.Error {
	return &tidemq.Error{Code: tidemq.ErrSNSAuthorizationError, Message: msg}
}

// AsError returns err as a *tidemq.Error, and anything that is not one as
// SNS's InternalError (its text may say things a client should not see).
func AsError(err error) *tidemq.Error {
	var e *tidemq.Error
	if errors.As(err, &e) && e.Code != nil {
		return e
	}
	return InternalFault()
}
