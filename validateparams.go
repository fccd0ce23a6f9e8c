package tidemq

import (
	"fmt"
	"strings"
)

// The rules of the Broker's params that need no state. A Broker calls a
// params type's Validate first, before it looks at any queue, so that a
// request that breaks one fails the same way on every backend and whether
// or not its queue exists. Optional numbers are pointers (nil: left out),
// because AWS refuses a 0 that a client gives where it accepts one left
// out. The messages are AWS's.

// optionalRange checks an optional integer parameter against its bounds.
func optionalRange(param string, v *int, lo, hi int, reason string) error {
	if v == nil || (*v >= lo && *v <= hi) {
		return nil
	}
	return InvalidParameter(param, *v, reason)
}

// Validate checks a CreateQueue request on its own: a name (of the home
// region and account, or "[<region>/][<account>:]<name>", region.go and
// account.go), valid for the queue's type (FIFO when Attributes say FifoQueue true), valid attributes
// and tags. It returns the type and the attributes normalised
// (ValidateQueueAttributes). What needs other queues (a RedrivePolicy's
// target) is the broker's to check.
func (p *CreateQueueParams) Validate() (fifo bool, attrs map[string]string, err error) {
	name, ok := validQualifiers(p.Name)
	if !ok {
		return false, nil, InvalidQueueName()
	}
	if name == "" {
		return false, nil, MissingParameter("QueueName")
	}
	fifo = strings.EqualFold(p.Attributes[AttrFifoQueue], "true")
	if err := ValidateQueueName(name, fifo); err != nil {
		return false, nil, err
	}
	if attrs, err = ValidateQueueAttributes(p.Attributes, fifo, true); err != nil {
		return false, nil, err
	}
	if err := ValidateTags(p.Tags); err != nil {
		return false, nil, err
	}
	if len(p.Tags) > MaxTagsPerQueue {
		return false, nil, TooManyTags(p.Name)
	}
	return fifo, attrs, nil
}

// Validate checks that a GetQueueUrl request names a queue.
func (p *GetQueueParams) Validate() error {
	if p.Name == "" {
		return MissingParameter("QueueName")
	}
	return nil
}

func validateListMaxResults(n *int) error {
	return optionalRange("MaxResults", n, 1, MaxListQueuesResults, "MaxResults must be an integer between 1 and 1000.")
}

// Validate checks MaxResults (1 to 1000 when given) and the prefix: no
// queue name is longer than 80 characters, so neither is a prefix (the
// region and account parts of a qualified prefix aside).
func (p *ListQueuesParams) Validate() error {
	plain, ok := validQualifiers(p.Prefix)
	if !ok {
		return InvalidParameter("QueueNamePrefix", p.Prefix, "The prefix names no region and account.")
	}
	if len(plain) > MaxQueueNameLength {
		return InvalidParameter("QueueNamePrefix", plain, fmt.Sprintf("Queue name prefix must be at most %d characters.", MaxQueueNameLength))
	}
	return validateListMaxResults(p.MaxResults)
}

// Validate checks MaxResults: 1 to 1000 when given.
func (p *ListDeadLetterSourceQueuesParams) Validate() error {
	return validateListMaxResults(p.MaxResults)
}

// Validate checks that every name is a queue attribute name (or All).
func (p *GetQueueAttributesParams) Validate() error {
	for _, n := range p.Names {
		if !IsQueueAttributeName(n) {
			return UnknownAttribute(n)
		}
	}
	return nil
}

// Validate checks that the request has attributes at all; the attributes
// themselves depend on the queue's type (ValidateQueueAttributes, which
// also refuses an empty list).
func (p *SetQueueAttributesParams) Validate() error {
	if p.Attributes == nil {
		return MissingParameter("Attributes")
	}
	return nil
}

// Validate checks that there are tags, and each of them. (A queue holds
// at most MaxTagsPerQueue tags, old and new together; the broker checks
// that with ValidateCount, once it has the queue.)
func (p *TagQueueParams) Validate() error {
	if len(p.Tags) == 0 {
		return MissingParameter("Tags")
	}
	return ValidateTags(p.Tags)
}

// ValidateCount checks that a queue named queue holding the tags current
// can take p's: at most MaxTagsPerQueue, its tags and p's new keys
// together (keys it already has are overwritten, not added).
func (p *TagQueueParams) ValidateCount(queue string, current map[string]string) error {
	n := len(current)
	for k := range p.Tags {
		if _, ok := current[k]; !ok {
			n++
		}
	}
	if n > MaxTagsPerQueue {
		return TooManyTags(queue)
	}
	return nil
}

// Validate checks that there are tag keys.
func (p *UntagQueueParams) Validate() error {
	if len(p.TagKeys) == 0 {
		return MissingParameter("TagKeys")
	}
	return nil
}

// Validate checks that there are a label, accounts and actions, and then
// the label.
func (p *AddPermissionParams) Validate() error {
	switch {
	case p.Label == "":
		return MissingParameter("Label")
	case len(p.AccountIDs) == 0:
		return MissingParameter("AWSAccountIds")
	case len(p.Actions) == 0:
		return MissingParameter("Actions")
	case !validLabel(p.Label):
		return InvalidParameter("Label", p.Label, "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.")
	}
	return nil
}

// Validate checks that there is a label.
func (p *RemovePermissionParams) Validate() error {
	if p.Label == "" {
		return MissingParameter("Label")
	}
	return nil
}

// IsBatch tells SendMessageBatch from SendMessage.
func (p *SendMessagesParams) IsBatch() bool { return p.Batch || len(p.Entries) != 1 }

// Validate checks what fails a whole send before its queue is looked at: a
// batch's entry Ids and total size (at most MaxMessageSize), a single
// message's body being there. Each entry's own rules depend on the queue
// (SendEntry's checks in the broker).
func (p *SendMessagesParams) Validate() error {
	if !p.IsBatch() {
		if p.Entries[0].Body == "" {
			return MissingParameter("MessageBody")
		}
		return nil
	}
	if err := validateBatchIDs(len(p.Entries), func(i int) string { return p.Entries[i].ID }); err != nil {
		return err
	}
	total := 0
	for i := range p.Entries {
		total += MessageSize(p.Entries[i].Body, p.Entries[i].Attributes)
	}
	if total > MaxMessageSize {
		return Errorf(ErrBatchRequestTooLong, "Batch requests cannot be longer than %d bytes. You have sent %d bytes.", MaxMessageSize, total)
	}
	return nil
}

// Validate checks the bounds of a receive: MaxNumberOfMessages 1 to 10,
// VisibilityTimeout 0 to 43200, WaitTimeSeconds 0 to 20 when given, and
// the form of a ReceiveRequestAttemptId.
func (p *ReceiveMessagesParams) Validate() error {
	if err := optionalRange("MaxNumberOfMessages", p.MaxNumberOfMessages, 1, MaxReceiveMessages, "Must be between 1 and 10, if provided."); err != nil {
		return err
	}
	if err := optionalRange("VisibilityTimeout", p.VisibilityTimeout, 0, MaxVisibilityTimeout, "Must be >= 0 and <= 43200, if provided."); err != nil {
		return err
	}
	if err := optionalRange("WaitTimeSeconds", p.WaitTimeSeconds, 0, MaxWaitTimeSeconds, "Must be >= 0 and <= 20, if provided."); err != nil {
		return err
	}
	if p.ReceiveRequestAttemptID != "" {
		return ValidateFIFOToken("ReceiveRequestAttemptId", p.ReceiveRequestAttemptID)
	}
	return nil
}

// IsBatch tells DeleteMessageBatch from DeleteMessage.
func (p *DeleteMessagesParams) IsBatch() bool { return p.Batch || len(p.Entries) != 1 }

// Validate checks a batch's entry Ids, or that a single delete has a
// receipt handle. A batch entry's handle is judged on its own.
func (p *DeleteMessagesParams) Validate() error {
	if !p.IsBatch() {
		if p.Entries[0].ReceiptHandle == "" {
			return MissingParameter("ReceiptHandle")
		}
		return nil
	}
	return validateBatchIDs(len(p.Entries), func(i int) string { return p.Entries[i].ID })
}

// IsBatch tells ChangeMessageVisibilityBatch from ChangeMessageVisibility.
func (p *ChangeVisibilityParams) IsBatch() bool { return p.Batch || len(p.Entries) != 1 }

// Validate checks a batch's entry Ids, or that a single change has a
// receipt handle and a timeout. Each entry's timeout is judged on its own
// (ChangeVisibilityEntry.Validate).
func (p *ChangeVisibilityParams) Validate() error {
	if !p.IsBatch() {
		if p.Entries[0].ReceiptHandle == "" {
			return MissingParameter("ReceiptHandle")
		}
		if p.Entries[0].VisibilityTimeout == nil {
			return MissingParameter("VisibilityTimeout")
		}
		return nil
	}
	return validateBatchIDs(len(p.Entries), func(i int) string { return p.Entries[i].ID })
}

// Validate checks the timeout's bounds, 0 to 43200 seconds. (The total
// visibility of a message is bounded too; that needs the message.)
func (e *ChangeVisibilityEntry) Validate() error {
	return optionalRange("VisibilityTimeout", e.VisibilityTimeout, 0, MaxVisibilityTimeout, "Must be >= 0 and <= 43200, if provided.")
}

// Validate checks Max: 1 to MaxPeekMessages when given.
func (p *PeekMessagesParams) Validate() error {
	return optionalRange("MaxNumberOfMessages", p.Max, 1, MaxPeekMessages, "Must be between 1 and 1000, if provided.")
}

// Validate checks that there is a source, and the rate: 1 to 500 messages
// per second when given.
func (p *StartMoveTaskParams) Validate() error {
	if p.SourceARN == "" {
		return MissingParameter("SourceArn")
	}
	return optionalRange("MaxNumberOfMessagesPerSecond", p.MaxNumberOfMessagesPerSecond, 1, MaxMoveTaskRate, "Must be between 1 and 500.")
}

// Validate checks that there is a source, and MaxResults: 1 to 10 when
// given.
func (p *ListMoveTasksParams) Validate() error {
	if p.SourceARN == "" {
		return MissingParameter("SourceArn")
	}
	return optionalRange("MaxResults", p.MaxResults, 1, MaxMoveTaskResults, "Must be between 1 and 10, if provided.")
}

// Validate checks that there is a task handle and that it is one, and
// returns what it encodes. Whether the task exists is the broker's to say.
func (p *CancelMoveTaskParams) Validate() (MoveTaskHandle, error) {
	if p.TaskHandle == "" {
		return MoveTaskHandle{}, MissingParameter("TaskHandle")
	}
	h, ok := ParseMoveTaskHandle(p.TaskHandle)
	if !ok {
		return h, Errorf(ErrInvalidParameterValue, "Value for parameter TaskHandle is invalid.")
	}
	return h, nil
}

// Limit is how many messages a receive returns at most: MaxNumberOfMessages,
// 1 when left out.
func (p *ReceiveMessagesParams) Limit() int { return orDefault(p.MaxNumberOfMessages, 1) }

// Limit is how many messages a peek returns at most: Max, DefaultPeekMessages
// when left out.
func (p *PeekMessagesParams) Limit() int { return orDefault(p.Max, DefaultPeekMessages) }

// Limit is how many tasks ListMessageMoveTasks returns at most: MaxResults,
// 1 when left out.
func (p *ListMoveTasksParams) Limit() int { return orDefault(p.MaxResults, 1) }

func orDefault(n *int, def int) int {
	if n == nil {
		return def
	}
	return *n
}
