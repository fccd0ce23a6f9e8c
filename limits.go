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
	MaxMoveTaskResults        = 10 // ListMessageMoveTasks' MaxResults; left out, 1
	MaxTagsPerQueue           = 50
	MaxTagKeyLength           = 128
	MaxTagValueLength         = 256
	MaxPermissionLabelLength  = 80
)

// Bounds of PeekMessages, a tidemq extension: how many messages one call
// returns at most, and when the caller leaves it to the broker.
const (
	MaxPeekMessages     = 1000
	DefaultPeekMessages = 10
)

// Windows that the broker keeps state for.
const (
	DedupWindow         = 5 * time.Minute
	ReceiveAttemptTTL   = 5 * time.Minute
	PurgeCooldown       = 60 * time.Second
	DefaultMaxReceives  = 10
	LongPollMaxDuration = MaxWaitTimeSeconds * time.Second
)

// Bounds on the client identity a message keeps (ClientInfo): the sender's
// access key, which is also its SenderId, and the client of every receive
// in its history. They come from request headers that tidemq does not
// control (with authentication off, the access key is whatever the
// Authorization header claims), and a message keeps up to MaxHistoryEvents
// of them, in memory and on disk: without a bound, a thousand one-byte
// messages received with 1 MB User-Agents took 1.8 GiB. NewClientInfo
// applies them; longer values are cut, not rejected (SDKs send long
// User-Agents, and a request is not wrong for having one).
const (
	// MaxClientUserAgentBytes keeps the product tokens an SDK's User-Agent
	// starts with (aws-sdk-go-v2/1.30.3 ua/2.1 os/linux lang/go#1.22.5
	// ... is about 120 bytes; Java's and botocore's about 200).
	MaxClientUserAgentBytes = 256
	// MaxAccessKeyIDLength is IAM's bound on an access key id (16 to 128
	// characters of [A-Za-z0-9_]).
	MaxAccessKeyIDLength = 128
	// MaxClientAddrBytes holds any "host:port" a listener reports, an IPv6
	// address with a zone included (about 70 bytes at most).
	MaxClientAddrBytes = 128
)

// MaxTraceHeaderBytes bounds the AWSTraceHeader message system attribute.
// AWS documents no bound for it in SQS, and its bytes do not count toward
// the message size (AWS X-Ray guide, "Amazon SQS and AWS X-Ray": the trace
// header is excluded from the message size and attribute quotas), so
// without one a send could carry megabytes beside its 1 MiB. 256 is the
// bound AWS documents for an X-Ray trace header passed in a request body
// (Step Functions' StartExecution traceHeader, 0 to 256) and the one the
// X-Ray propagators of OpenTelemetry and Datadog keep headers under; a
// header that SDKs produce (Root, Parent, Sampled, Lineage) is under 120.
const MaxTraceHeaderBytes = 256
