package tidemq

import (
	"encoding/json"
	"strings"
)

// ListedQueue is a QueueSnapshot as the ListQueueStats extension action
// lists it: under the queue's URL and with AWS's key names (QueueUrl,
// QueueArn, Fifo, DeadLetterTargetArn, ...), the wire that action has
// answered since it exists. The fields are the snapshot's; only the keys
// differ, and they are written once, in listedWire. The server writes it
// (api/sqs) and tidemq dlq reads it, from servers of any version: the
// wire is unchanged, so an older dlq reads a newer server and this one an
// older server.
//
// The listing carries the snapshot's depths, age, retention and
// dead-letter facts, not its counters (Stats), last receive or bytes
// (those are /tidemq/queues').
type ListedQueue struct {
	URL string
	QueueSnapshot
	// AgeKnown is false when the lister could not tell the age of the
	// oldest message (a client filling a ListedQueue from
	// GetQueueAttributes: on AWS the age is a CloudWatch metric); the wire
	// then omits OldestAgeSeconds. A server always knows it.
	AgeKnown bool
}

// Listed is the snapshot as ListQueueStats lists it under url.
func (s QueueSnapshot) Listed(url string) ListedQueue {
	return ListedQueue{URL: url, QueueSnapshot: s, AgeKnown: true}
}

// listedWire holds ListQueueStats' keys, in the order the wire has them.
type listedWire struct {
	QueueURL            string   `json:"QueueUrl"`
	QueueArn            string   `json:"QueueArn"`
	Fifo                bool     `json:"Fifo"`
	Visible             int      `json:"Visible"`
	InFlight            int      `json:"InFlight"`
	Delayed             int      `json:"Delayed"`
	OldestAgeSeconds    *float64 `json:"OldestAgeSeconds,omitempty"`
	RetentionSeconds    int      `json:"RetentionSeconds"`
	DeadLetterTargetArn string   `json:"DeadLetterTargetArn,omitempty"`
	MaxReceiveCount     int      `json:"MaxReceiveCount,omitempty"`
	IsDeadLetterQueue   bool     `json:"IsDeadLetterQueue"`
}

// MarshalJSON writes the queue with ListQueueStats' keys.
func (l ListedQueue) MarshalJSON() ([]byte, error) {
	w := listedWire{
		QueueURL: l.URL, QueueArn: l.ARN, Fifo: l.FIFO,
		Visible: l.Visible, InFlight: l.InFlight, Delayed: l.Delayed,
		RetentionSeconds: l.RetentionSeconds, DeadLetterTargetArn: l.DeadLetterTarget,
		MaxReceiveCount: l.MaxReceiveCount, IsDeadLetterQueue: l.IsDeadLetterQueue,
	}
	if l.AgeKnown {
		age := l.OldestAgeSeconds
		w.OldestAgeSeconds = &age
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a queue of a ListQueueStats answer. The snapshot's
// Name is the URL's last segment (the queue's name in its region).
func (l *ListedQueue) UnmarshalJSON(b []byte) error {
	var w listedWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*l = ListedQueue{URL: w.QueueURL, QueueSnapshot: QueueSnapshot{
		Name: w.QueueURL[strings.LastIndexByte(w.QueueURL, '/')+1:], ARN: w.QueueArn, FIFO: w.Fifo,
		Visible: w.Visible, InFlight: w.InFlight, Delayed: w.Delayed,
		RetentionSeconds: w.RetentionSeconds, DeadLetterTarget: w.DeadLetterTargetArn,
		MaxReceiveCount: w.MaxReceiveCount, IsDeadLetterQueue: w.IsDeadLetterQueue,
	}}
	if w.OldestAgeSeconds != nil {
		l.OldestAgeSeconds, l.AgeKnown = *w.OldestAgeSeconds, true
	}
	return nil
}
