package sns

import "sync/atomic"

// DeliveryStats counts what happened to deliveries since Open. Every
// delivery ends in exactly one of Delivered, DeadLettered, Undeliverable,
// Lost or Unsubscribed (or is still under way).
type DeliveryStats struct {
	Delivered     uint64 // to the subscribed queue or endpoint
	Retries       uint64 // retry attempts made
	DeadLettered  uint64 // sent to the subscription's dead-letter queue
	Undeliverable uint64 // given up, no RedrivePolicy: logged and dropped
	Lost          uint64 // given up, and the dead-letter queue refused it too
	Unsubscribed  uint64 // the subscription was deleted before delivery
	Recovered     uint64 // deliveries found in the outbox at Open
	Duplicates    uint64 // FIFO publishes dropped by topic deduplication
	Signatures    uint64 // notification signatures computed (one per publish and message text; sign.go)
}

type counters struct {
	delivered, retries, deadLettered, undeliverable, lost, unsubscribed, recovered, duplicates, signatures atomic.Uint64
}

// Stats returns the delivery counters.
func (s *Service) Stats() DeliveryStats {
	c := &s.stats
	return DeliveryStats{
		Delivered: c.delivered.Load(), Retries: c.retries.Load(), DeadLettered: c.deadLettered.Load(),
		Undeliverable: c.undeliverable.Load(), Lost: c.lost.Load(), Unsubscribed: c.unsubscribed.Load(),
		Recovered: c.recovered.Load(), Duplicates: c.duplicates.Load(), Signatures: c.signatures.Load(),
	}
}
