package tidemq

// ErrorMessage is an error's wording in the catalogue: its entry and its text,
// with fmt verbs for what an occurrence fills in. Every text an error
// constructor of errors.go answers with is a template here, so the words
// are kept once, in one table, as nats-server keeps its errors' texts in
// one file; a constructor fills the template and nothing else words the
// error. Raise an error through its constructor (NonExistentQueue(),
// InvalidAction(a), ...); the templates are exported for the wire's own
// checks (a transport that rewords one text, the tests that pin them).
type ErrorMessage struct {
	Code *ErrorCode
	Text string
}

// New returns the error with the template's verbs filled from args.
func (m ErrorMessage) New(args ...any) *Error { return Errorf(m.Code, m.Text, args...) }

// The catalogue's texts, worded as AWS words them where AWS has the error.
var (
	// Any request.
	MsgInternalFailure  = ErrorMessage{ErrInternalFailure, "We encountered an internal error. Please try again."}
	MsgShuttingDown     = ErrorMessage{ErrServiceUnavailable, "The server is shutting down."}
	MsgUnreadableBody   = ErrorMessage{ErrMalformedInput, "The request body could not be read: %v"}
	MsgInvalidAction    = ErrorMessage{ErrInvalidAction, "The action %s is not valid for this endpoint."}
	MsgMissingAction    = ErrorMessage{ErrMissingAction, "The request must contain the parameter Action."}
	MsgUnknownOperation = ErrorMessage{ErrUnknownOperation, "An unknown operation was requested."}
	MsgMissingParameter = ErrorMessage{ErrMissingParameter, "The request must contain the parameter %s."}
	MsgInvalidParameter = ErrorMessage{ErrInvalidParameterValue, "Value %s for parameter %s is invalid. Reason: %s"}

	// Signatures (api/sigv4).
	MsgMissingAuthenticationToken = ErrorMessage{ErrMissingAuthenticationTk, "Request is missing Authentication Token"}
	MsgInvalidClientTokenID       = ErrorMessage{ErrInvalidClientTokenID, "The security token included in the request is invalid."}
	// MsgSignatureDoesNotMatch is followed by the canonical request and
	// the string to sign the server computed, as in AWS's message.
	MsgSignatureDoesNotMatch = ErrorMessage{ErrSignatureDoesNotMatch, "The request signature we calculated does not match the signature you provided. " +
		"Check your AWS Secret Access Key and signing method. Consult the service documentation for details." +
		"\n\nThe Canonical String for this request should have been\n'%s'\n\nThe String-to-Sign should have been\n'%s'\n"}

	// Queues and their attributes.
	MsgQueueDoesNotExist        = ErrorMessage{ErrQueueDoesNotExist, "The specified queue does not exist."}
	MsgQueueExistsWithDifferent = ErrorMessage{ErrQueueNameExists, "A queue already exists with the same name and a different value for attribute %s"}
	MsgUnknownAttribute         = ErrorMessage{ErrInvalidAttributeName, "Unknown Attribute %s."}
	MsgInvalidQueueName         = ErrorMessage{ErrInvalidParameterValue, "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"}
	MsgInvalidFIFOName          = ErrorMessage{ErrInvalidParameterValue, "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length."}
	MsgPurgeInProgress          = ErrorMessage{ErrPurgeQueueInProgress, "Only one PurgeQueue operation on %s is allowed every 60 seconds."}
	MsgQueueFull                = ErrorMessage{ErrRequestThrottled, "Queue %s holds %d bytes of messages, at the server's limit of %d (--max-queue-bytes): sends are refused until consumers drain it; retry later."}

	// Messages and receipt handles.
	MsgInvalidCharacters    = ErrorMessage{ErrInvalidParameterValue, "%s '%s' contains invalid characters."}
	MsgInvalidReceiptHandle = ErrorMessage{ErrReceiptHandleIsInvalid, "The input receipt handle \"%s\" is not a valid receipt handle."}
	MsgMessageNotInflight   = ErrorMessage{ErrMessageNotInflight, "The message referred to is not in flight."}
	MsgTooManyInflight      = ErrorMessage{ErrOverLimit, "Too many messages are in flight in queue %s: the limit is %d."}

	// Message move tasks.
	MsgMoveTaskSourceNotFound      = ErrorMessage{ErrResourceNotFound, "The resource that you specified for the SourceArn parameter doesn't exist."}
	MsgMoveTaskDestinationNotFound = ErrorMessage{ErrResourceNotFound, "The resource that you specified for the DestinationArn parameter doesn't exist."}
	MsgMoveTaskNotFound            = ErrorMessage{ErrResourceNotFound, "Task does not exist."}
	MsgNotADeadLetterQueue         = ErrorMessage{ErrInvalidParameterValue, "Source queue must be configured as a Dead Letter Queue."}
	MsgMoveTaskAlreadyRunning      = ErrorMessage{ErrInvalidParameterValue, "There is already a task running. Only one active task is allowed for a source queue arn at a given time."}
	MsgMoveTaskNotRunning          = ErrorMessage{ErrInvalidParameterValue, "Only a task in the RUNNING state can be cancelled; this one is %s."}

	// SNS (package sns words its errors with these).
	MsgSNSInvalidParameter       = ErrorMessage{ErrSNSInvalidParameter, "Invalid parameter: %s"}
	MsgSNSInvalidParameterReason = ErrorMessage{ErrSNSInvalidParameter, "Invalid parameter: %s Reason: %s"}
	MsgSNSTagLimitExceeded       = ErrorMessage{ErrSNSTagLimitExceeded, "Could not complete request: tag quota of per resource exceeded"}
	MsgSNSInternalError          = ErrorMessage{ErrSNSInternalError, "An internal error occurred."}
	MsgSNSNotDurable             = ErrorMessage{ErrSNSInternalError, "The publish could not be recorded durably."}
	MsgSNSSubscriptionNotFound   = ErrorMessage{ErrSNSNotFound, "Subscription does not exist"}

	// tidemq's own endpoints.
	MsgPostJSON = ErrorMessage{ErrMethodNotAllowed, "POST a JSON request to %s"}
)

// The reasons of InvalidParameter errors (the text after "Reason: "),
// each kept once like the templates above.
const (
	reasonHandleExpired       = "The receipt handle has expired."
	reasonNotForVisibility    = "Message does not exist or is not available for visibility timeout change."
	reasonVisibilityBeyond    = "Total VisibilityTimeout for the message is beyond the limit [%d seconds]"
	reasonMessageDoesNotExist = "Message does not exist."
	reasonTooManyHandles      = "Too many receipt handles."
	reasonMoveToSource        = "The destination must differ from the source."

	// SNS's reasons (sns.InvalidParameter's).
	ReasonSNSShortARN    = "An ARN must have at least 6 elements, not %d"
	ReasonSNSTopicExists = "Topic already exists with different attributes"
)
