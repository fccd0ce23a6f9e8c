package bench

import "context"

// Client is what a scenario needs from an SQS endpoint. Two implement it:
// RawClient, which speaks AWS JSON 1.0 over plain HTTP with pre-built
// requests so that the server, not the load generator, gets the CPU; and
// SDKClient, the official aws-sdk-go-v2 client, for endpoints that need
// the whole SDK (AWS itself, or a server that checks signatures when the
// raw client is not asked to sign).
type Client interface {
	// CreateQueue creates (or finds) a queue and returns its URL.
	CreateQueue(ctx context.Context, name string, attrs map[string]string) (string, error)
	DeleteQueue(ctx context.Context, url string) error
	// Send sends one message with SendMessage, or several with
	// SendMessageBatch; a batch with a failed entry is an error.
	Send(ctx context.Context, url string, msgs []Outgoing, batch bool) error
	// Receive receives up to max messages, waiting up to wait seconds.
	Receive(ctx context.Context, url string, max, wait int) ([]Received, error)
	// Delete deletes messages one DeleteMessage at a time, or with one
	// DeleteMessageBatch; a failed entry is an error.
	Delete(ctx context.Context, url string, handles []string, batch bool) error
	// Counts returns ApproximateNumberOfMessages and
	// ApproximateNumberOfMessagesNotVisible.
	Counts(ctx context.Context, url string) (visible, inflight int64, err error)
	// QueueARN returns the queue's QueueArn attribute.
	QueueARN(ctx context.Context, url string) (string, error)
}

// Outgoing is a message to send. Group and Dedup are set for FIFO queues.
type Outgoing struct {
	Body, Group, Dedup string
}

// Received is a received message: its body and receipt handle.
type Received struct {
	Body, Handle string
}
