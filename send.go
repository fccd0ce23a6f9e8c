package tidemq

import "time"

// SenderID is the SenderId of p's messages: the client's access key, or
// account when the request carries none.
func (p *SendMessagesParams) SenderID(account string) string {
	if p.Client.AccessKey == "" {
		return account
	}
	return p.Client.AccessKey
}

// SendDelay is how long entry, sent to a queue with settings s (FIFO when
// fifo), waits before it can be received: its own DelaySeconds on a
// standard queue, else the queue's DelaySeconds (a FIFO queue's delay is
// per queue only).
func (s *QueueSettings) SendDelay(entry *SendEntry, fifo bool) time.Duration {
	if entry.DelaySeconds != nil && !fifo {
		return time.Duration(*entry.DelaySeconds) * time.Second
	}
	return s.Delay
}

// Results returns the results of p's entries as a broker starts them:
// each with its entry's ID, and with Err set for an entry that Validate
// refuses for a queue of this type (fifo) and MaximumMessageSize
// (maxSize). A broker sends only the entries without an error.
func (p *SendMessagesParams) Results(fifo bool, maxSize int) []SendResult {
	results := make([]SendResult, len(p.Entries))
	for i := range p.Entries {
		results[i].ID = p.Entries[i].ID
		results[i].Err = p.Entries[i].Validate(fifo, maxSize)
	}
	return results
}
