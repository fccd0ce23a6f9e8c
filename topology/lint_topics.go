package topology

import "strings"

// checkTopic reports the topic and subscription settings that SNS (and
// tidemq's sns.Service, which words its refusals as AWS does) would refuse
// when the topology is applied, so that lint says so before apply fails.
// A queue's type is what the topology declares, or else what its name
// says (".fifo"), as SNS decides it from the ARN.
func (l *linter) checkTopic(tp *Topic) {
	if !tp.FIFO {
		for _, a := range []struct {
			field, name string
			set         bool
		}{
			{"contentBasedDeduplication", "ContentBasedDeduplication", tp.ContentBasedDeduplication != nil},
			{"fifoThroughputScope", "FifoThroughputScope", tp.FifoThroughputScope != ""},
		} {
			if a.set {
				l.add(&tp.src, a.field, RuleFIFOTopicAttribute, SeverityError,
					"remove "+a.field+", or make the topic FIFO (fifo: true and a name ending in .fifo)",
					"topic %s is standard: SNS refuses %s on it, whatever its value (%s can only be set for FIFO topics)", tp.Name, a.name, a.name)
			}
		}
	}
	for _, s := range tp.Subscriptions {
		name := subscriptionName(tp, s)
		switch s.Protocol {
		case "http", "https":
			if tp.FIFO {
				l.add(&s.src, "protocol", RuleFIFOTopicProtocol, SeverityError,
					"subscribe an SQS FIFO queue instead and have its consumer call the endpoint, or make the topic standard",
					"subscription %s: FIFO topics can only have sqs subscriptions, not %s; SNS refuses the subscription", name, s.Protocol)
			}
		case "sqs":
			if !tp.FIFO && l.queueIsFIFO(s.Endpoint) {
				l.add(&s.src, "endpoint", RuleSubscriptionQueue, SeverityError,
					"make the topic FIFO (fifo: true and a name ending in .fifo), or subscribe a standard queue",
					"subscription %s: FIFO SQS Queues can not be subscribed to standard SNS topics (topic %s is standard, queue %s is FIFO)",
					name, tp.Name, queueName(s.Endpoint))
			}
		}
		if r := s.RedrivePolicy; r != nil && r.DeadLetterQueue != "" {
			if dlqFIFO := l.queueIsFIFO(r.DeadLetterQueue); dlqFIFO != tp.FIFO {
				reason := "must use a standard queue as DLQ for a subscription to a standard topic."
				if tp.FIFO {
					reason = "must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic."
				}
				l.add(&s.src, "redrivePolicy.deadLetterQueue", RuleSubscriptionDLQType, SeverityError,
					"use a "+kind(tp.FIFO)+" dead-letter queue for a subscription to a "+kind(tp.FIFO)+" topic",
					"subscription %s: topic %s is %s but its dead-letter queue %s is %s: SNS refuses the RedrivePolicy (%s)",
					name, tp.Name, kind(tp.FIFO), queueName(r.DeadLetterQueue), kind(dlqFIFO), reason)
			}
		}
	}
}

// queueIsFIFO says whether a queue, named in this topology or by an SQS
// ARN, is FIFO: as declared, or else by its name.
func (l *linter) queueIsFIFO(nameOrARN string) bool {
	name := queueName(nameOrARN)
	if q := l.c.Queue(name); q != nil {
		return q.FIFO
	}
	return strings.HasSuffix(name, ".fifo")
}
