package tidemq

// ErrorMessage is an error's wording in the catalogue: its entry and its text,
// with fmt verbs for what an occurrence fills in. An error raised in more
// than one place (by both brokers, by both transports) is raised from its
// ErrorMessage, so its words are kept once, here, as nats-server keeps its
// errors' texts in one table.
type ErrorMessage struct {
	Code *ErrorCode
	Text string
}

// New returns the error with the template's verbs filled from args.
func (m ErrorMessage) New(args ...any) *Error { return Errorf(m.Code, m.Text, args...) }

// The catalogue's messages, worded as AWS words them.
var (
	MsgInvalidAction         = ErrorMessage{ErrInvalidAction, "The action %s is not valid for this endpoint."}
	MsgMissingAction         = ErrorMessage{ErrMissingAction, "The request must contain the parameter Action."}
	MsgUnknownOperation      = ErrorMessage{ErrUnknownOperation, "An unknown operation was requested."}
	MsgUnknownAttribute      = ErrorMessage{ErrInvalidAttributeName, "Unknown Attribute %s."}
	MsgShuttingDown          = ErrorMessage{ErrServiceUnavailable, "The server is shutting down."}
	MsgQueueAttributeDiffers = ErrorMessage{ErrQueueNameExists, "A queue already exists with the same name and a different value for attribute %s"}
	MsgPurgeInProgress       = ErrorMessage{ErrPurgeQueueInProgress, "Only one PurgeQueue operation on %s is allowed every 60 seconds."}
	MsgTooManyInflight       = ErrorMessage{ErrOverLimit, "Too many messages are in flight in queue %s: the limit is %d."}
	MsgNotInflight           = ErrorMessage{ErrMessageNotInflight, "The message referred to is not in flight."}
	MsgInvalidFIFOName       = ErrorMessage{ErrInvalidParameterValue, "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length."}

	// The message-move tasks'.
	MsgSourceArnNotFound      = ErrorMessage{ErrResourceNotFound, "The resource that you specified for the SourceArn parameter doesn't exist."}
	MsgDestinationArnNotFound = ErrorMessage{ErrResourceNotFound, "The resource that you specified for the DestinationArn parameter doesn't exist."}
	MsgTaskNotFound           = ErrorMessage{ErrResourceNotFound, "Task does not exist."}
	MsgTaskRunning            = ErrorMessage{ErrInvalidParameterValue, "There is already a task running. Only one active task is allowed for a source queue arn at a given time."}
	MsgSourceNotDeadLetter    = ErrorMessage{ErrInvalidParameterValue, "Source queue must be configured as a Dead Letter Queue."}
	MsgTaskNotRunning         = ErrorMessage{ErrInvalidParameterValue, "Only a task in the RUNNING state can be cancelled; this one is %s."}
)
