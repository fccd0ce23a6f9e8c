package tidemq

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Queue attribute names (the QueueAttributeName enum).
const (
	AttrAll                                   = "All"
	AttrPolicy                                = "Policy"
	AttrVisibilityTimeout                     = "VisibilityTimeout"
	AttrMaximumMessageSize                    = "MaximumMessageSize"
	AttrMessageRetentionPeriod                = "MessageRetentionPeriod"
	AttrApproximateNumberOfMessages           = "ApproximateNumberOfMessages"
	AttrApproximateNumberOfMessagesNotVisible = "ApproximateNumberOfMessagesNotVisible"
	AttrApproximateNumberOfMessagesDelayed    = "ApproximateNumberOfMessagesDelayed"
	AttrCreatedTimestamp                      = "CreatedTimestamp"
	AttrLastModifiedTimestamp                 = "LastModifiedTimestamp"
	AttrQueueArn                              = "QueueArn"
	AttrDelaySeconds                          = "DelaySeconds"
	AttrReceiveMessageWaitTimeSeconds         = "ReceiveMessageWaitTimeSeconds"
	AttrRedrivePolicy                         = "RedrivePolicy"
	AttrRedriveAllowPolicy                    = "RedriveAllowPolicy"
	AttrFifoQueue                             = "FifoQueue"
	AttrContentBasedDeduplication             = "ContentBasedDeduplication"
	AttrDeduplicationScope                    = "DeduplicationScope"
	AttrFifoThroughputLimit                   = "FifoThroughputLimit"
	AttrKmsMasterKeyID                        = "KmsMasterKeyId"
	AttrKmsDataKeyReusePeriodSeconds          = "KmsDataKeyReusePeriodSeconds"
	AttrSqsManagedSseEnabled                  = "SqsManagedSseEnabled"
)

// ReadOnlyQueueAttributes are computed by the broker and cannot be set.
var ReadOnlyQueueAttributes = []string{
	AttrApproximateNumberOfMessages, AttrApproximateNumberOfMessagesNotVisible,
	AttrApproximateNumberOfMessagesDelayed, AttrCreatedTimestamp,
	AttrLastModifiedTimestamp, AttrQueueArn,
}

// fifoOnlyAttributes may be set only on FIFO queues.
var fifoOnlyAttributes = map[string]bool{
	AttrFifoQueue: true, AttrContentBasedDeduplication: true,
	AttrDeduplicationScope: true, AttrFifoThroughputLimit: true,
}

// DefaultQueueAttributes are the settable attributes of a new queue, as a
// fresh queue on AWS reports them.
func DefaultQueueAttributes(fifo bool) map[string]string {
	a := map[string]string{
		AttrVisibilityTimeout:             strconv.Itoa(DefaultVisibilityTimeout),
		AttrMaximumMessageSize:            strconv.Itoa(MaxMessageSize),
		AttrMessageRetentionPeriod:        strconv.Itoa(DefaultRetentionPeriod),
		AttrDelaySeconds:                  "0",
		AttrReceiveMessageWaitTimeSeconds: "0",
		AttrSqsManagedSseEnabled:          "true",
	}
	if fifo {
		a[AttrFifoQueue] = "true"
		a[AttrContentBasedDeduplication] = "false"
		a[AttrDeduplicationScope] = "queue"
		a[AttrFifoThroughputLimit] = "perQueue"
	}
	return a
}

// ValidateQueueAttributes checks attributes given to CreateQueue (creating)
// or SetQueueAttributes on a queue of the given type, and returns them
// normalised (booleans lower-cased). It checks each value on its own;
// checks that need other queues (a dead-letter target that exists and has
// the same type) are the broker's. SetQueueAttributes must set something.
func ValidateQueueAttributes(attrs map[string]string, fifo, creating bool) (map[string]string, error) {
	if !creating && len(attrs) == 0 {
		return nil, MissingParameter("Attribute.1.Name")
	}
	out := make(map[string]string, len(attrs))
	for name, value := range attrs {
		if fifoOnlyAttributes[name] && !fifo {
			if name == AttrDeduplicationScope || name == AttrFifoThroughputLimit {
				return nil, Errorf(ErrInvalidAttributeName, "You can specify the %s only when FifoQueue is set to true.", name)
			}
			return nil, UnknownAttribute(name)
		}
		invalid := func() error {
			return Errorf(ErrInvalidAttributeValue, "Invalid value for the parameter %s.", name)
		}
		switch name {
		case AttrVisibilityTimeout, AttrMaximumMessageSize, AttrMessageRetentionPeriod,
			AttrDelaySeconds, AttrReceiveMessageWaitTimeSeconds, AttrKmsDataKeyReusePeriodSeconds:
			lo, hi := intAttributeRange(name)
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < lo || n > hi {
				return nil, invalid()
			}
			out[name] = strconv.Itoa(n)
		case AttrFifoQueue:
			b, ok := parseBool(value)
			if !ok {
				return nil, invalid()
			}
			if !creating && !b {
				return nil, Errorf(ErrInvalidAttributeValue, "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.")
			}
			// FifoQueue=true on a FIFO queue changes nothing; AWS accepts it.
			if !b {
				return nil, UnknownAttribute("FifoQueue")
			}
			out[name] = "true"
		case AttrContentBasedDeduplication, AttrSqsManagedSseEnabled:
			b, ok := parseBool(value)
			if !ok {
				return nil, invalid()
			}
			out[name] = strconv.FormatBool(b)
		case AttrDeduplicationScope:
			if value != "queue" && value != "messageGroup" {
				return nil, invalid()
			}
			out[name] = value
		case AttrFifoThroughputLimit:
			if value != "perQueue" && value != "perMessageGroupId" {
				return nil, invalid()
			}
			out[name] = value
		case AttrPolicy:
			if value != "" && !json.Valid([]byte(value)) {
				return nil, invalid()
			}
			out[name] = value
		case AttrRedrivePolicy:
			if value != "" {
				p, err := ParseRedrivePolicy(value)
				if err != nil {
					return nil, err
				}
				value = p.String()
			}
			out[name] = value
		case AttrRedriveAllowPolicy:
			if value != "" {
				p, err := ParseRedriveAllowPolicy(value)
				if err != nil {
					return nil, err
				}
				value = p.String()
			}
			out[name] = value
		case AttrKmsMasterKeyID:
			out[name] = value
		default:
			return nil, UnknownAttribute(name)
		}
	}
	if out[AttrKmsMasterKeyID] != "" && out[AttrSqsManagedSseEnabled] == "true" {
		return nil, Errorf(ErrInvalidAttributeName, "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.")
	}
	if fifo {
		if err := ValidateMergedQueueAttributes(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ValidateMergedQueueAttributes checks the rules between attributes on
// what a queue would have once SetQueueAttributes merged the given ones
// into its own (MergeQueueAttributes): a Broker calls it after
// ValidateQueueAttributes, which can only see what was given.
func ValidateMergedQueueAttributes(merged map[string]string) error {
	if merged[AttrFifoThroughputLimit] == "perMessageGroupId" && merged[AttrDeduplicationScope] == "queue" {
		return Errorf(ErrInvalidAttributeValue, "Invalid value for the parameter FifoThroughputLimit. Reason: perMessageGroupId is allowed only when DeduplicationScope is messageGroup.")
	}
	return nil
}

func intAttributeRange(name string) (int, int) {
	switch name {
	case AttrVisibilityTimeout:
		return 0, MaxVisibilityTimeout
	case AttrMaximumMessageSize:
		return MinMaximumMessageSize, MaxMessageSize
	case AttrMessageRetentionPeriod:
		return MinRetentionPeriod, MaxRetentionPeriod
	case AttrDelaySeconds:
		return 0, MaxDelaySeconds
	case AttrReceiveMessageWaitTimeSeconds:
		return 0, MaxWaitTimeSeconds
	case AttrKmsDataKeyReusePeriodSeconds:
		return 60, 86400
	}
	return 0, 0
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// IsQueueAttributeName reports whether name is a queue attribute name that
// GetQueueAttributes accepts ("All" included).
func IsQueueAttributeName(name string) bool {
	switch name {
	case AttrAll, AttrPolicy, AttrVisibilityTimeout, AttrMaximumMessageSize, AttrMessageRetentionPeriod,
		AttrApproximateNumberOfMessages, AttrApproximateNumberOfMessagesNotVisible,
		AttrApproximateNumberOfMessagesDelayed, AttrCreatedTimestamp, AttrLastModifiedTimestamp,
		AttrQueueArn, AttrDelaySeconds, AttrReceiveMessageWaitTimeSeconds, AttrRedrivePolicy,
		AttrRedriveAllowPolicy, AttrFifoQueue, AttrContentBasedDeduplication, AttrDeduplicationScope,
		AttrFifoThroughputLimit, AttrKmsMasterKeyID, AttrKmsDataKeyReusePeriodSeconds, AttrSqsManagedSseEnabled:
		return true
	}
	return false
}

// DefaultKmsDataKeyReusePeriodSeconds is what a queue reports once SSE-KMS
// is turned on without a reuse period.
const DefaultKmsDataKeyReusePeriodSeconds = "300"

// MergeQueueAttributes applies attributes that ValidateQueueAttributes
// accepted to a queue's current ones (the defaults, for CreateQueue) and
// returns the result; current is not changed. Besides overwriting, it keeps
// the two kinds of server-side encryption exclusive, as SQS does: turning
// SSE-KMS on (a KmsMasterKeyId) turns SSE-SQS off and sets the reuse period
// to its default if there is none; turning it off (SqsManagedSseEnabled
// true, or KmsMasterKeyId "") clears KmsMasterKeyId and
// KmsDataKeyReusePeriodSeconds.
func MergeQueueAttributes(current, given map[string]string) map[string]string {
	out := make(map[string]string, len(current)+len(given))
	for k, v := range current {
		out[k] = v
	}
	for k, v := range given {
		out[k] = v
	}
	key, keyGiven := given[AttrKmsMasterKeyID]
	switch {
	case keyGiven && key != "":
		out[AttrSqsManagedSseEnabled] = "false"
		if out[AttrKmsDataKeyReusePeriodSeconds] == "" {
			out[AttrKmsDataKeyReusePeriodSeconds] = DefaultKmsDataKeyReusePeriodSeconds
		}
	case keyGiven || given[AttrSqsManagedSseEnabled] == "true":
		delete(out, AttrKmsMasterKeyID)
		delete(out, AttrKmsDataKeyReusePeriodSeconds)
	}
	return out
}
