package tidemq

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Fault says whose fault an error is, as AWS's <Type> element and the
// x-amzn-query-error header do.
type Fault string

// The two faults.
const (
	Sender   Fault = "Sender"
	Receiver Fault = "Receiver"
)

// ErrorCode is one entry of the error catalogue: how an error is named on
// each wire protocol and which HTTP status carries it (a plain number: the
// domain does not import net/http; the transports write it). The catalogue below is
// the single source of truth; the protocol codecs in api/ only translate it.
type ErrorCode struct {
	// Shape is the short name sent in the JSON protocol's __type, after
	// Namespace and '#'.
	Shape string
	// Namespace prefixes Shape in __type: "com.amazonaws.sqs" for errors in
	// the SQS model, "com.amazon.coral.service" for the generic ones.
	Namespace string
	// Code is the legacy (Query) error code: the XML <Code> and the first
	// part of the x-amzn-query-error header.
	Code string
	// Status is the HTTP status.
	Status int
	// Fault is Sender for client errors and Receiver for server errors.
	Fault Fault
}

const (
	nsSQS   = "com.amazonaws.sqs"
	nsCoral = "com.amazon.coral.service"
)

func modeled(shape, code string, status int) *ErrorCode {
	return &ErrorCode{Shape: shape, Namespace: nsSQS, Code: code, Status: status, Fault: Sender}
}

func generic(shape, code string, status int, fault Fault) *ErrorCode {
	return &ErrorCode{Shape: shape, Namespace: nsCoral, Code: code, Status: status, Fault: fault}
}

// The error catalogue. Shapes, legacy codes and statuses follow the SQS
// Smithy model's awsQueryError traits (reference §1.1).
var (
	ErrQueueDoesNotExist            = modeled("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", 400)
	ErrQueueNameExists              = modeled("QueueNameExists", "QueueAlreadyExists", 400)
	ErrQueueDeletedRecently         = modeled("QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently", 400)
	ErrPurgeQueueInProgress         = modeled("PurgeQueueInProgress", "AWS.SimpleQueueService.PurgeQueueInProgress", 403)
	ErrMessageNotInflight           = modeled("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", 400)
	ErrTooManyEntriesInBatchRequest = modeled("TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400)
	ErrEmptyBatchRequest            = modeled("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", 400)
	ErrBatchEntryIdsNotDistinct     = modeled("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400)
	ErrBatchRequestTooLong          = modeled("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", 400)
	ErrInvalidBatchEntryID          = modeled("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", 400)
	ErrUnsupportedOperation         = modeled("UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", 400)
	ErrOverLimit                    = modeled("OverLimit", "OverLimit", 403)
	ErrRequestThrottled             = modeled("RequestThrottled", "RequestThrottled", 403)
	ErrInvalidSecurity              = modeled("InvalidSecurity", "InvalidSecurity", 403)
	ErrInvalidAddress               = modeled("InvalidAddress", "InvalidAddress", 404)
	ErrReceiptHandleIsInvalid       = modeled("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 404)
	ErrResourceNotFound             = modeled("ResourceNotFoundException", "ResourceNotFoundException", 404)
	ErrInvalidAttributeName         = modeled("InvalidAttributeName", "InvalidAttributeName", 400)
	ErrInvalidAttributeValue        = modeled("InvalidAttributeValue", "InvalidAttributeValue", 400)
	ErrInvalidMessageContents       = modeled("InvalidMessageContents", "InvalidMessageContents", 400)
	ErrInvalidIDFormat              = modeled("InvalidIdFormat", "InvalidIdFormat", 400)

	ErrInvalidParameterValue   = generic("InvalidParameterValueException", "InvalidParameterValue", 400, Sender)
	ErrMissingParameter        = generic("MissingRequiredParameterException", "MissingParameter", 400, Sender)
	ErrInvalidAction           = generic("InvalidAction", "InvalidAction", 400, Sender)
	ErrMissingAction           = generic("MissingAction", "MissingAction", 400, Sender)
	ErrUnknownOperation        = generic("UnknownOperationException", "UnknownOperationException", 404, Sender)
	ErrMalformedInput          = generic("SerializationException", "MalformedInput", 400, Sender)
	ErrAccessDenied            = generic("AccessDeniedException", "AccessDenied", 403, Sender)
	ErrInvalidClientTokenID    = generic("InvalidClientTokenId", "InvalidClientTokenId", 403, Sender)
	ErrSignatureDoesNotMatch   = generic("SignatureDoesNotMatch", "SignatureDoesNotMatch", 403, Sender)
	ErrIncompleteSignature     = generic("IncompleteSignature", "IncompleteSignature", 403, Sender)
	ErrMissingAuthenticationTk = generic("MissingAuthenticationToken", "MissingAuthenticationToken", 403, Sender)
	ErrRequestExpired          = generic("RequestExpired", "RequestExpired", 403, Sender)
	ErrRequestEntityTooLarge   = generic("RequestEntityTooLarge", "RequestEntityTooLarge", 413, Sender)
	ErrInternalFailure         = generic("InternalFailure", "InternalFailure", 500, Receiver)
	ErrServiceUnavailable      = generic("ServiceUnavailable", "ServiceUnavailable", 503, Receiver)

	// ErrInvalidQueryParameter is AWS's common error for a Query request
	// whose query string "is malformed or does not adhere to AWS standards"
	// (SQS API reference, Common Errors; HTTP 400). tidemq answers it for
	// parameter names and counts beyond the Query parser's bounds.
	ErrInvalidQueryParameter = generic("InvalidQueryParameter", "InvalidQueryParameter", 400, Sender)
	// ErrMalformedQueryString is AWS's common error for a query string
	// with a syntax error. tidemq's SNS endpoint answers it for a form
	// that does not decode, with HTTP 400 as it always has (AWS's common
	// errors list it with 404).
	ErrMalformedQueryString = generic("MalformedQueryString", "MalformedQueryString", 400, Sender)
)

const nsSNS = "com.amazonaws.sns"

func snsModeled(shape, code string, status int) *ErrorCode {
	return &ErrorCode{Shape: shape, Namespace: nsSNS, Code: code, Status: status, Fault: Sender}
}

// SNS's errors (API 2010-03-31): the exceptions of the SNS model, each with
// the code, HTTP status and fault of its error trait (reference §7). SNS
// speaks only the Query protocol, so the code is what clients see; Shape
// and Namespace name the model's exception. The common errors (MissingAction,
// InvalidAction, the signature errors, InvalidQueryParameter, ...) are the
// generic entries above, shared with SQS.
var (
	ErrSNSInvalidParameter             = snsModeled("InvalidParameterException", "InvalidParameter", 400)
	ErrSNSParameterValueInvalid        = snsModeled("InvalidParameterValueException", "ParameterValueInvalid", 400)
	ErrSNSNotFound                     = snsModeled("NotFoundException", "NotFound", 404)
	ErrSNSResourceNotFound             = snsModeled("ResourceNotFoundException", "ResourceNotFound", 404)
	ErrSNSAuthorizationError           = snsModeled("AuthorizationErrorException", "AuthorizationError", 403)
	ErrSNSTagLimitExceeded             = snsModeled("TagLimitExceededException", "TagLimitExceeded", 400)
	ErrSNSEmptyBatchRequest            = snsModeled("EmptyBatchRequestException", "EmptyBatchRequest", 400)
	ErrSNSTooManyEntriesInBatchRequest = snsModeled("TooManyEntriesInBatchRequestException", "TooManyEntriesInBatchRequest", 400)
	ErrSNSInvalidBatchEntryID          = snsModeled("InvalidBatchEntryIdException", "InvalidBatchEntryId", 400)
	ErrSNSBatchEntryIdsNotDistinct     = snsModeled("BatchEntryIdsNotDistinctException", "BatchEntryIdsNotDistinct", 400)
	ErrSNSBatchRequestTooLong          = snsModeled("BatchRequestTooLongException", "BatchRequestTooLong", 400)
	ErrSNSThrottled                    = snsModeled("ThrottledException", "Throttled", 429)
	ErrSNSValidation                   = snsModeled("ValidationException", "ValidationException", 400)
	ErrSNSInternalError                = &ErrorCode{Shape: "InternalErrorException", Namespace: nsSNS, Code: "InternalError", Status: 500, Fault: Receiver}
)

const nsTidemq = "tidemq"

func admin(code string, status int) *ErrorCode {
	fault := Sender
	if status >= 500 {
		fault = Receiver
	}
	return &ErrorCode{Shape: code, Namespace: nsTidemq, Code: code, Status: status, Fault: fault}
}

// The errors of tidemq's own endpoints (the admin API, the console, the
// trigger API, backups), answered as {"error": message, "code": code}
// (api/adminjson). The generic entries above serve them too
// (InvalidParameterValue, AccessDenied, ServiceUnavailable, ...).
var (
	ErrAdminNotFound        = admin("NotFound", 404)
	ErrMethodNotAllowed     = admin("MethodNotAllowed", 405)
	ErrUnsupportedMediaType = admin("UnsupportedMediaType", 415)
	ErrMisdirectedRequest   = admin("MisdirectedRequest", 421)
	ErrAlarmsOff            = admin("AlarmsOff", 404)
	ErrInvalidTrigger       = admin("InvalidTrigger", 400)
	ErrTriggerNotFound      = admin("TriggerNotFound", 404)
	ErrTriggerExists        = admin("TriggerExists", 409)
	ErrBackupsOff           = admin("BackupsOff", 400)
	ErrBackupsNeedAuth      = admin("BackupsNeedAuth", 403)
	ErrQueuesInPostgreSQL   = admin("QueuesInPostgreSQL", 400)
	ErrNothingToBackUp      = admin("NothingToBackUp", 400)
	ErrInvalidBackupRequest = admin("InvalidRequest", 400)
	ErrInvalidDestination   = admin("InvalidDestination", 400)
	ErrDestinationExists    = admin("DestinationExists", 409)
	ErrBackupInProgress     = admin("BackupInProgress", 409)
	ErrBackupFailed         = admin("BackupFailed", 500)
)

// Error is an error from the catalogue with the message for this occurrence.
// Every error a Broker returns to a client is an *Error; anything else is
// reported as InternalFailure by the transports.
type Error struct {
	Code    *ErrorCode
	Message string
}

// Error implements error.
func (e *Error) Error() string { return e.Code.Code + ": " + e.Message }

// Is makes errors.Is(err, &Error{Code: ErrX}) and errors.Is(err, ErrX-based
// sentinels) match on the catalogue entry.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf returns an *Error with a formatted message.
func Errorf(code *ErrorCode, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Code: code, Message: format}
	}
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns err as an *Error, mapping anything that is not one to
// InternalFailure.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return InternalFailure()
}

// HasCode reports whether err is an *Error with the given catalogue entry.
func HasCode(err error, code *ErrorCode) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// IsThrottled reports whether err asks the caller to slow down and try
// again (RequestThrottled: a queue at --max-queue-bytes, or SNS's
// Throttled): the sender's fault by the catalogue, yet not permanent.
func IsThrottled(err error) bool {
	return HasCode(err, ErrRequestThrottled) || HasCode(err, ErrSNSThrottled)
}

// The constructors of the catalogue's errors: each fills its template of
// errmessages.go (the texts are kept there, once) with what an occurrence
// tells. Brokers and transports raise errors through them and word none of
// their own.

// InternalFailure is the answer to a request that failed for a reason the
// client is not told (a bug, a store's error).
func InternalFailure() *Error { return MsgInternalFailure.New() }

// ShuttingDown answers a request that arrives while the broker closes.
func ShuttingDown() *Error { return MsgShuttingDown.New() }

// UnreadableBody is the error for a request body that could not be read
// (the connection failed, or the body was cut).
func UnreadableBody(err error) *Error { return MsgUnreadableBody.New(err) }

// InvalidAction answers a request for an action the endpoint does not have.
func InvalidAction(action string) *Error { return MsgInvalidAction.New(action) }

// MissingAction answers a Query request without an Action.
func MissingAction() *Error { return MsgMissingAction.New() }

// UnknownOperation answers a JSON request whose X-Amz-Target names no
// operation of the service.
func UnknownOperation() *Error { return MsgUnknownOperation.New() }

// MissingAuthenticationToken answers a request that carries no signature
// where one is needed.
func MissingAuthenticationToken() *Error { return MsgMissingAuthenticationToken.New() }

// InvalidClientTokenID answers a signature by an access key the server
// does not know.
func InvalidClientTokenID() *Error { return MsgInvalidClientTokenID.New() }

// SignatureDoesNotMatch answers a wrong signature with what the server
// signed: the canonical request and the string to sign.
func SignatureDoesNotMatch(canonical, toSign string) *Error {
	return MsgSignatureDoesNotMatch.New(canonical, toSign)
}

// NonExistentQueue is the error for a queue that is not there.
func NonExistentQueue() *Error { return MsgQueueDoesNotExist.New() }

// InvalidParameter returns AWS's usual "Value V for parameter P is invalid.
// Reason: R." error.
func InvalidParameter(param string, value any, reason string) *Error {
	return MsgInvalidParameter.New(Echo(fmt.Sprint(value)), param, reason)
}

// InvalidReceiptHandle is AWS's ReceiptHandleIsInvalid for handle, with
// the handle echoed as Echo shortens it.
func InvalidReceiptHandle(handle string) *Error { return MsgInvalidReceiptHandle.New(Echo(handle)) }

// ExpiredReceiptHandle is the error for a handle that names its message
// but no longer acts on it: on a FIFO queue a handle of an earlier receive,
// or one whose visibility timeout has run out.
func ExpiredReceiptHandle(handle string) *Error {
	return InvalidParameter("ReceiptHandle", handle, reasonHandleExpired)
}

// MaxEcho is the longest client value an error message repeats whole: a
// receipt handle is at most 1,024 characters. A longer one is cut (Echo),
// so that a 5 MB value does not come back as a 5 MB error.
const MaxEcho = 1024

// Echo is a client's value as an error message repeats it: whole up to
// MaxEcho bytes, else its first MaxEcho bytes (whole UTF-8 characters)
// and how long it was.
func Echo(v string) string {
	if len(v) <= MaxEcho {
		return v
	}
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", v[:cut], len(v))
}

// MissingParameter returns AWS's "The request must contain the parameter P." error.
func MissingParameter(param string) *Error { return MsgMissingParameter.New(param) }

// UnknownAttribute answers an attribute name the queue (or the call) does
// not have.
func UnknownAttribute(name string) *Error { return MsgUnknownAttribute.New(name) }

// InvalidQueueName answers a queue name of characters SQS does not allow
// (or a region prefix that names no region).
func InvalidQueueName() *Error { return MsgInvalidQueueName.New() }

// InvalidFIFOName answers a FIFO queue's name that breaks SQS's rule.
func InvalidFIFOName() *Error { return MsgInvalidFIFOName.New() }

// InvalidCharacters answers a value (what: "Message body", "Message
// attribute", ...) holding characters SQS does not allow.
func InvalidCharacters(what, name string) *Error { return MsgInvalidCharacters.New(what, name) }

// MessageNotAvailableForVisibility is ChangeMessageVisibility's answer
// for a handle whose message is gone.
func MessageNotAvailableForVisibility(handle string) *Error {
	return InvalidParameter("ReceiptHandle", handle, reasonNotForVisibility)
}

// MessageNotInflight is ChangeMessageVisibility's answer for a message
// that is neither in flight nor receivable.
func MessageNotInflight() *Error { return MsgMessageNotInflight.New() }

// VisibilityBeyondLimit is ChangeMessageVisibility's answer for a timeout
// that would end more than MaxVisibilityTimeout after the receive.
func VisibilityBeyondLimit(timeout int) *Error {
	return InvalidParameter("VisibilityTimeout", timeout, fmt.Sprintf(reasonVisibilityBeyond, MaxVisibilityTimeout))
}

// MessageDoesNotExist answers a failure recorded for a message that is gone.
func MessageDoesNotExist(handle string) *Error {
	return InvalidParameter("ReceiptHandle", handle, reasonMessageDoesNotExist)
}

// TooManyReceiptHandles answers a RecordFailure call beyond its bound.
func TooManyReceiptHandles(n int) *Error {
	return InvalidParameter("ReceiptHandles", n, reasonTooManyHandles)
}

// QueueExistsWithDifferent is CreateQueue's answer for a name that is taken
// by a queue whose attribute attr differs from the request's.
func QueueExistsWithDifferent(attr string) *Error { return MsgQueueExistsWithDifferent.New(attr) }

// PurgeInProgress answers a second PurgeQueue on queue within a minute.
func PurgeInProgress(queue string) *Error { return MsgPurgeInProgress.New(queue) }

// TooManyInflight answers a receive from a standard queue that holds its
// cap of messages in flight (InflightLimits.Cap: MaxInflightStandard
// unless a broker was opened with a smaller one).
func TooManyInflight(queue string, limit int) *Error { return MsgTooManyInflight.New(queue, limit) }

// MoveToSource answers MoveMessages whose destination is its source.
func MoveToSource(arn string) *Error {
	return InvalidParameter("DestinationArn", arn, reasonMoveToSource)
}

// MoveTaskSourceNotFound, MoveTaskDestinationNotFound, MoveTaskNotFound,
// NotADeadLetterQueue, MoveTaskAlreadyRunning and MoveTaskNotRunning are the
// message move task's errors.
func MoveTaskSourceNotFound() *Error { return MsgMoveTaskSourceNotFound.New() }

// MoveTaskDestinationNotFound: see MoveTaskSourceNotFound.
func MoveTaskDestinationNotFound() *Error { return MsgMoveTaskDestinationNotFound.New() }

// MoveTaskNotFound: see MoveTaskSourceNotFound.
func MoveTaskNotFound() *Error { return MsgMoveTaskNotFound.New() }

// NotADeadLetterQueue: see MoveTaskSourceNotFound.
func NotADeadLetterQueue() *Error { return MsgNotADeadLetterQueue.New() }

// MoveTaskAlreadyRunning: see MoveTaskSourceNotFound.
func MoveTaskAlreadyRunning() *Error { return MsgMoveTaskAlreadyRunning.New() }

// MoveTaskNotRunning: see MoveTaskSourceNotFound.
func MoveTaskNotRunning(status string) *Error { return MsgMoveTaskNotRunning.New(status) }

// QueueFull refuses a send to a queue whose messages add up to the
// server's --max-queue-bytes: retryable (SDKs back off on RequestThrottled).
func QueueFull(queue string, bytes, limit int64) *Error { return MsgQueueFull.New(queue, bytes, limit) }

// PostJSON answers one of tidemq's own endpoints asked with another method
// than POST (path: the endpoint).
func PostJSON(path string) *Error { return MsgPostJSON.New(path) }
