package tidemq

import (
	"testing"
	"time"
)

func TestParseQueueSettings(t *testing.T) {
	s := ParseQueueSettings(map[string]string{
		AttrVisibilityTimeout:             "45",
		AttrDelaySeconds:                  "5",
		AttrMessageRetentionPeriod:        "60",
		AttrReceiveMessageWaitTimeSeconds: "20",
		AttrMaximumMessageSize:            "2048",
		AttrRedrivePolicy:                 `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":3}`,
		AttrRedriveAllowPolicy:            `{"redrivePermission":"denyAll"}`,
		AttrContentBasedDeduplication:     "true",
		AttrDeduplicationScope:            "messageGroup",
	})
	if s.Visibility != 45*time.Second || s.Delay != 5*time.Second || s.Retention != time.Minute || s.WaitTime != 20*time.Second {
		t.Errorf("durations: %+v", s)
	}
	if s.MaxSize != 2048 || !s.ContentDedup || !s.GroupDedup {
		t.Errorf("size/dedup: %+v", s)
	}
	if s.Redrive == nil || s.Redrive.MaxReceiveCount != 3 || s.Redrive.DeadLetterTargetARN != "arn:aws:sqs:us-east-1:000000000000:dlq" {
		t.Errorf("redrive: %+v", s.Redrive)
	}
	if s.Allow.RedrivePermission != "denyAll" {
		t.Errorf("allow: %+v", s.Allow)
	}
}

func TestParseQueueSettingsDefaults(t *testing.T) {
	s := ParseQueueSettings(map[string]string{AttrDeduplicationScope: "queue", AttrRedrivePolicy: "not json"})
	if s.Redrive != nil {
		t.Errorf("unparsable RedrivePolicy gave %+v, want none", s.Redrive)
	}
	if s.Allow.RedrivePermission != RedriveAllowAll {
		t.Errorf("no RedriveAllowPolicy gave %q, want allowAll", s.Allow.RedrivePermission)
	}
	if s.GroupDedup || s.ContentDedup || s.MaxSize != 0 || s.Visibility != 0 {
		t.Errorf("defaults: %+v", s)
	}
}
