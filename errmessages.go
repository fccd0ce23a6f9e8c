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

// The transports' messages, worded as AWS words them. The brokers' errors
// have constructors in errors.go (NonExistentQueue, PurgeInProgress, the
// move tasks'…), each holding its text once.
var (
	MsgInvalidAction    = ErrorMessage{ErrInvalidAction, "The action %s is not valid for this endpoint."}
	MsgMissingAction    = ErrorMessage{ErrMissingAction, "The request must contain the parameter Action."}
	MsgUnknownOperation = ErrorMessage{ErrUnknownOperation, "An unknown operation was requested."}
	MsgUnknownAttribute = ErrorMessage{ErrInvalidAttributeName, "Unknown Attribute %s."}
	MsgInvalidFIFOName  = ErrorMessage{ErrInvalidParameterValue, "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length."}
)
