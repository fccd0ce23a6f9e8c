package metrics

import (
	"context"

	"github.com/tidemq/tidemq"
)

// Broker wraps a tidemq.Broker so that the size of every accepted message
// is observed (tidemq_message_size_bytes). Every other call, Snapshot,
// Healthy, Drain and RecordFailure included, passes through unchanged.
func (m *Metrics) Broker(b tidemq.Broker) tidemq.Broker { return &sizeBroker{Broker: b, m: m} }

type sizeBroker struct {
	tidemq.Broker
	m *Metrics
}

// SendMessages observes the size of each entry the broker accepted.
func (b *sizeBroker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	res, err := b.Broker.SendMessages(ctx, p)
	if err != nil {
		return res, err
	}
	b.observe(&p, res)
	return res, nil
}

// SendToQueues observes the size of each entry, as SendMessages does, when
// the broker can send to several queues at once (tidemq.QueuesSender).
func (b *sizeBroker) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	res, err := tidemq.SendToQueues(ctx, b.Broker, ps)
	if err != nil {
		return res, err
	}
	for i := range min(len(ps), len(res)) {
		b.observe(&ps[i], res[i])
	}
	return res, nil
}

// observe records the size of each entry of p that res says was accepted.
func (b *sizeBroker) observe(p *tidemq.SendMessagesParams, res []tidemq.SendResult) {
	for i, r := range res {
		if r.Err == nil && i < len(p.Entries) {
			b.m.ObserveMessageSize(p.Queue, tidemq.MessageSize(p.Entries[i].Body, p.Entries[i].Attributes))
		}
	}
}
