package tidemq

import (
	"strconv"
	"time"
)

// QueueSettings are the queue attributes a broker acts on, parsed once from
// the attribute map whenever it changes. Brokers embed it in their queue.
type QueueSettings struct {
	Visibility   time.Duration      // VisibilityTimeout
	Delay        time.Duration      // DelaySeconds
	Retention    time.Duration      // MessageRetentionPeriod
	WaitTime     time.Duration      // ReceiveMessageWaitTimeSeconds
	MaxSize      int                // MaximumMessageSize, in bytes
	Redrive      *RedrivePolicy     // RedrivePolicy; nil when none
	Allow        RedriveAllowPolicy // RedriveAllowPolicy; allowAll when none
	ContentDedup bool               // ContentBasedDeduplication
	GroupDedup   bool               // DeduplicationScope messageGroup
}

// ParseQueueSettings reads the settings from attrs, which must already be
// validated and merged with the defaults: a value that does not parse is
// taken as zero (or no policy), never an error.
func ParseQueueSettings(attrs map[string]string) QueueSettings {
	seconds := func(name string) time.Duration {
		n, _ := strconv.Atoi(attrs[name])
		return time.Duration(n) * time.Second
	}
	s := QueueSettings{
		Visibility:   seconds(AttrVisibilityTimeout),
		Delay:        seconds(AttrDelaySeconds),
		Retention:    seconds(AttrMessageRetentionPeriod),
		WaitTime:     seconds(AttrReceiveMessageWaitTimeSeconds),
		Allow:        RedriveAllowPolicy{RedrivePermission: RedriveAllowAll},
		ContentDedup: attrs[AttrContentBasedDeduplication] == "true",
		GroupDedup:   attrs[AttrDeduplicationScope] == "messageGroup",
	}
	s.MaxSize, _ = strconv.Atoi(attrs[AttrMaximumMessageSize])
	if v := attrs[AttrRedrivePolicy]; v != "" {
		if p, err := ParseRedrivePolicy(v); err == nil {
			s.Redrive = &p
		}
	}
	if v := attrs[AttrRedriveAllowPolicy]; v != "" {
		if p, err := ParseRedriveAllowPolicy(v); err == nil {
			s.Allow = p
		}
	}
	return s
}

// DeadLetterDue reports whether a message received receives times is moved
// to the dead-letter queue instead of delivered: the receive attempt after
// maxReceiveCount receives moves it, as on SQS.
func (s *QueueSettings) DeadLetterDue(receives int) bool {
	return s.Redrive != nil && receives >= s.Redrive.MaxReceiveCount
}
