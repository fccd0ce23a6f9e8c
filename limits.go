package tidemq

import "time"

// Limits and defaults, as AWS documents them (reference §4).
const (
	MaxMessageSize            = 1 << 20 // bytes: body plus message attributes
	MinMaximumMessageSize     = 1024
	MaxBatchEntries           = 10
	MaxBatchEntryIDLength     = 80
	MaxMessageAttributes      = 10
	MaxAttributeNameLength    = 256
	MaxAttributeTypeLength    = 256
	MaxVisibilityTimeout      = 43200 // seconds, also the cap on total visibility from a receive
	DefaultVisibilityTimeout  = 30
	MaxDelaySeconds           = 900
	MinRetentionPeriod        = 60
	MaxRetentionPeriod        = 1209600
	DefaultRetentionPeriod    = 345600
	MaxWaitTimeSeconds        = 20
	MaxReceiveMessages        = 10
	MaxQueueNameLength        = 80
	MaxDedupIDLength          = 128
	MinMaxReceiveCount        = 1
	MaxMaxReceiveCount        = 1000
	MaxInflightStandard       = 120000
	MaxInflightFIFO           = 120000
	MaxListQueuesResults      = 1000
	MaxRedriveAllowSourceArns = 10
	MaxMoveTaskRate           = 500
	MaxTagsPerQueue           = 50
	MaxPermissionLabelLength  = 80
)

// Windows that the broker keeps state for.
const (
	DedupWindow         = 5 * time.Minute
	ReceiveAttemptTTL   = 5 * time.Minute
	PurgeCooldown       = 60 * time.Second
	DefaultMaxReceives  = 10
	LongPollMaxDuration = MaxWaitTimeSeconds * time.Second
)
