package tidemq

import "context"

// HistoryConsumerFailed is the history kind of a failed delivery to a
// consumer that tidemq runs itself (a trigger): the function returned an
// error, timed out, or listed the message in batchItemFailures. Its Detail
// says which consumer and why.
const HistoryConsumerFailed = "consumer-failed"

// FailureRecorder adds a consumer's failure to the story of the messages it
// received. It is part of Broker, named for the consumers (triggers) that
// need nothing else.
//
// Recording a failure changes nothing else about a message: its
// visibility, receive count and place in the queue stay as they are, and
// it comes back when its visibility timeout runs out as any other
// undeleted message does. The story is what a dead letter is explained by.
type FailureRecorder interface {
	// RecordFailure appends a HistoryConsumerFailed event to each message
	// named by a receipt handle. The result holds one error (nil for
	// success) per handle; a handle whose message is gone or was received
	// again since is an error for that entry only.
	RecordFailure(ctx context.Context, p RecordFailureParams) ([]error, error)
}

// RecordFailureParams are the inputs of RecordFailure.
type RecordFailureParams struct {
	Queue          string
	ReceiptHandles []string
	// Detail is the event's text: the consumer and what went wrong.
	Detail string
	// Client is the consumer, as it identified itself on the receive.
	Client ClientInfo
}
