package metrics

import (
	"context"

	"github.com/tidemq/tidemq"
)

// Broker wraps a tidemq.Broker so that the size of every accepted message
// is observed (tidemq_message_size_bytes). Every other call passes through
// unchanged; Unwrap gives the wrapped broker back.
func (m *Metrics) Broker(b tidemq.Broker) tidemq.Broker { return &sizeBroker{Broker: b, m: m} }

type sizeBroker struct {
	tidemq.Broker
	m *Metrics
}

// Unwrap returns the wrapped broker, so that the transports still find the
// optional methods it has (such as Snapshot).
func (b *sizeBroker) Unwrap() tidemq.Broker { return b.Broker }

// SendMessages observes the size of each entry the broker accepted.
func (b *sizeBroker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	res, err := b.Broker.SendMessages(ctx, p)
	if err != nil {
		return res, err
	}
	for i, r := range res {
		if r.Err == nil && i < len(p.Entries) {
			b.m.ObserveMessageSize(p.Queue, tidemq.MessageSize(p.Entries[i].Body, p.Entries[i].Attributes))
		}
	}
	return res, nil
}
