package tidemq

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ValidateBody checks a message body: at least one character, only the
// characters XML 1.0 allows (#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD
// #x10000-#x10FFFF).
func ValidateBody(body string) error {
	if body == "" {
		return MissingParameter("MessageBody")
	}
	for i, r := range body {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(body[i:]); size == 1 {
				return Errorf(ErrInvalidMessageContents, "Invalid binary character was found in the message body, the set of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF")
			}
		}
		if !allowedRune(r) {
			return Errorf(ErrInvalidMessageContents, "Invalid binary character '#x%X' was found in the message body, the set of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF", r)
		}
	}
	return nil
}

func allowedRune(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// ValidateMessageAttributes checks names, types and values of message
// attributes (at most 10; names of [A-Za-z0-9_.-] and accented Latin
// letters (attributeNameRune), no AWS./Amazon. prefix,
// no leading, trailing or doubled dot; types String, Number or Binary with an
// optional custom suffix; values not empty).
func ValidateMessageAttributes(attrs map[string]MessageAttributeValue) error {
	if len(attrs) > MaxMessageAttributes {
		return Errorf(ErrInvalidParameterValue, "Number of message attributes [%d] exceeds the allowed maximum [%d].", len(attrs), MaxMessageAttributes)
	}
	for name, v := range attrs {
		if err := validateAttributeName(name); err != nil {
			return err
		}
		if err := validateAttributeValue(name, v, "message (user) attribute"); err != nil {
			return err
		}
	}
	return nil
}

// ValidateSystemAttributes checks MessageSystemAttributes on a send: the only
// name accepted is AWSTraceHeader, with a String value that is an X-Ray
// trace header (ValidateTraceHeader).
func ValidateSystemAttributes(attrs map[string]MessageAttributeValue) error {
	for name, v := range attrs {
		if name != "AWSTraceHeader" {
			return Errorf(ErrInvalidParameterValue, "Message system attribute name '%s' is invalid.", name)
		}
		if v.DataType != "String" {
			return Errorf(ErrInvalidParameterValue, "Message system attribute 'AWSTraceHeader' must be of type String.")
		}
		if err := validateAttributeValue(name, v, "message system attribute"); err != nil {
			return err
		}
		if err := ValidateTraceHeader(v.StringValue); err != nil {
			return err
		}
	}
	return nil
}

func validateAttributeName(name string) error {
	bad := func(reason string) error {
		return Errorf(ErrInvalidParameterValue, "Message (user) attribute name '%s' is invalid. %s", name, reason)
	}
	if name == "" {
		return Errorf(ErrInvalidParameterValue, "The request must contain non-empty message (user) attribute names.")
	}
	if len(name) > MaxAttributeNameLength {
		return bad(fmt.Sprintf("The message (user) attribute name must be shorter than %d bytes.", MaxAttributeNameLength+1))
	}
	for _, r := range name {
		if !attributeNameRune(r) {
			return bad("The message (user) attribute name can only contain alphanumeric characters, hyphens, underscores and periods.")
		}
	}
	lower := strings.ToLower(name)
	if strings.HasPrefix(lower, "aws.") || strings.HasPrefix(lower, "amazon.") {
		return bad("The message (user) attribute name must not start with the reserved prefixes AWS. or Amazon. (case insensitive).")
	}
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
		return bad("The message (user) attribute name must not start or end with a period (.), or have multiple periods in succession (..).")
	}
	return nil
}

// attributeNameRune reports whether r may appear in a message attribute
// name: ASCII letters and digits, '_', '-' and '.', and the accented Latin
// letters of U+00C0-U+017F (Latin-1 Supplement and Latin Extended-A: SQS
// accepts "attr.1øßä", LocalStack's AWS-validated
// test_send_message_with_invalid_string_attributes; its docs say
// "alphanumeric"). Other non-ASCII letters are refused, unverified on AWS.
func attributeNameRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
		return true
	case r >= 0xC0 && r <= 0x17F:
		return unicode.IsLetter(r) // not × (U+00D7) or ÷ (U+00F7)
	}
	return false
}

func validateAttributeValue(name string, v MessageAttributeValue, what string) error {
	if v.DataType == "" {
		return Errorf(ErrInvalidParameterValue, "The %s '%s' must contain a non-empty message attribute type.", what, name)
	}
	if len(v.DataType) > MaxAttributeTypeLength {
		return Errorf(ErrInvalidParameterValue, "The %s '%s' has a data type longer than %d bytes.", what, name, MaxAttributeTypeLength)
	}
	base, custom, hasCustom := strings.Cut(v.DataType, ".")
	if (base != "String" && base != "Number" && base != "Binary") || (hasCustom && custom == "") {
		return Errorf(ErrInvalidParameterValue, "The type of %s '%s' is invalid. You must use only the following supported type prefixes: Binary, Number, String.", what, name)
	}
	switch base {
	case "Binary":
		if len(v.BinaryValue) == 0 {
			return Errorf(ErrInvalidParameterValue, "The %s '%s' with type 'Binary' must use field 'Binary'.", what, name)
		}
	default:
		if v.StringValue == "" {
			// AWS's wording (LocalStack's AWS-validated
			// test_send_message_with_empty_string_attribute).
			return Errorf(ErrInvalidParameterValue, "%s%s '%s' must contain a non-empty value of type '%s'.", strings.ToUpper(what[:1]), what[1:], name, base)
		}
		if base == "Number" && !isNumber(v.StringValue) {
			return Errorf(ErrInvalidParameterValue, "Could not cast message attribute '%s' value to number.", name)
		}
		// Bytes that are not UTF-8 are invalid characters too (ranging over
		// them yields U+FFFD, which is allowed).
		if !utf8.ValidString(v.StringValue) {
			return InvalidCharacters(what, name)
		}
		for _, r := range v.StringValue {
			if !allowedRune(r) {
				return InvalidCharacters(what, name)
			}
		}
	}
	return nil
}

// isNumber accepts what SQS accepts for a Number attribute: an optional sign,
// digits with an optional fraction, and an optional exponent.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// ValidateFIFOToken checks a MessageDeduplicationId, MessageGroupId or
// ReceiveRequestAttemptId: 1 to 128 alphanumeric or ASCII punctuation
// characters.
func ValidateFIFOToken(param, value string) error {
	ok := len(value) >= 1 && len(value) <= MaxDedupIDLength
	for i := 0; ok && i < len(value); i++ {
		c := value[i]
		ok = c > ' ' && c < 0x7f
	}
	if !ok {
		return InvalidParameter(param, value, param+" can only include alphanumeric and punctuation characters. 1 to 128 in length.")
	}
	return nil
}

// ValidateBatchEntryIDs checks the Ids of a batch request: 1 to 10 entries,
// each Id 1 to 80 characters of [A-Za-z0-9_-], all distinct.
func ValidateBatchEntryIDs(ids []string) error {
	return validateBatchIDs(len(ids), func(i int) string { return ids[i] })
}

func validBatchID(id string) bool {
	if len(id) == 0 || len(id) > MaxBatchEntryIDLength {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// ValidateQueueName checks a queue name: 1 to 80 characters of
// [A-Za-z0-9_-], where a FIFO queue's name ends in .fifo (the suffix counts).
func ValidateQueueName(name string, fifo bool) error {
	base := name
	if fifo {
		if !strings.HasSuffix(name, ".fifo") {
			return InvalidFIFOName()
		}
		base = strings.TrimSuffix(name, ".fifo")
	}
	ok := len(base) >= 1 && len(name) <= MaxQueueNameLength
	for _, r := range base {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			ok = false
		}
	}
	if !ok {
		if fifo {
			return InvalidFIFOName()
		}
		return InvalidQueueName()
	}
	return nil
}

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

// validateBatchIDs checks the Ids of a batch request of n entries, id(i)
// being the Id of entry i, as ValidateBatchEntryIDs does. It allocates
// nothing: a batch has at most 10 entries, few enough to compare each Id
// with those before it.
func validateBatchIDs(n int, id func(i int) string) error {
	if n == 0 {
		return Errorf(ErrEmptyBatchRequest, "There should be at least one %s in the request.", "entry")
	}
	if n > MaxBatchEntries {
		return Errorf(ErrTooManyEntriesInBatchRequest, "Maximum number of entries per request are %d. You have sent %d.", MaxBatchEntries, n)
	}
	for i := 0; i < n; i++ {
		s := id(i)
		if !validBatchID(s) {
			return Errorf(ErrInvalidBatchEntryID, "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		for j := 0; j < i; j++ {
			if id(j) == s {
				return Errorf(ErrBatchEntryIdsNotDistinct, "Id %s repeated.", s)
			}
		}
	}
	return nil
}

// Validate checks a CreateQueue request on its own: a name (of the home
// region or "<region>/<name>", region.go), valid for the queue's type (FIFO when Attributes say FifoQueue true), valid attributes
// and tags. It returns the type and the attributes normalised
// (ValidateQueueAttributes). What needs other queues (a RedrivePolicy's
// target) is the broker's to check.
func (p *CreateQueueParams) Validate() (fifo bool, attrs map[string]string, err error) {
	name := p.Name
	if region, plain, ok := strings.Cut(p.Name, "/"); ok {
		if !ValidRegion(region) {
			return false, nil, InvalidQueueName()
		}
		name = plain
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
// region part of a regional prefix aside).
func (p *ListQueuesParams) Validate() error {
	plain := p.Prefix
	if _, n, ok := strings.Cut(plain, "/"); ok {
		plain = n
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

// ValidateTags checks queue tags: keys of 1 to 128 characters that do not
// start with aws: (in any case), values of at most 256.
func ValidateTags(tags map[string]string) error {
	for k, v := range tags {
		if k == "" || len(k) > MaxTagKeyLength || len(v) > MaxTagValueLength || strings.HasPrefix(strings.ToLower(k), "aws:") {
			return InvalidParameter("Tags", k, "Tag keys must be 1 to 128 characters, must not start with aws:, and values at most 256 characters.")
		}
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

// TooManyTags is AWS's error for a CreateQueue or TagQueue that would
// leave more than MaxTagsPerQueue tags on the queue.
func TooManyTags(queue string) error {
	return Errorf(ErrInvalidParameterValue, "Too many tags added for queue %s.", queue)
}

// Validate checks that there are tag keys.
func (p *UntagQueueParams) Validate() error {
	if len(p.TagKeys) == 0 {
		return MissingParameter("TagKeys")
	}
	return nil
}

// validLabel reports whether a permission label is 1 to 80 characters of
// [A-Za-z0-9_-].
func validLabel(label string) bool {
	if label == "" || len(label) > MaxPermissionLabelLength {
		return false
	}
	for _, r := range label {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
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

// The rules of a send that need the queue: a Broker applies them once it
// has found the queue.

// ValidateFIFO applies the rules of a send to a FIFO queue that fail the
// whole request (reference §5): every entry needs a MessageGroupId, and a
// MessageDeduplicationId unless the queue deduplicates by content. In a
// batch both are InvalidParameterValue.
func (p *SendMessagesParams) ValidateFIFO(contentDedup bool) error {
	for i := range p.Entries {
		entry := &p.Entries[i]
		if entry.MessageGroupID == "" {
			if p.Batch {
				return Errorf(ErrInvalidParameterValue, "The request must contain the parameter MessageGroupId.")
			}
			return MissingParameter("MessageGroupId")
		}
		if entry.MessageDeduplicationID == "" && !contentDedup {
			return Errorf(ErrInvalidParameterValue, "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
		}
	}
	return nil
}

// Validate checks one message against the rules of the queue it is sent
// to, FIFO or not, whose MaximumMessageSize is maxSize: its body and
// attributes, its size, its delay (none on a FIFO queue), its group and
// deduplication ids (the latter on a FIFO queue only). A problem here is
// the entry's, not the whole request's.
func (e *SendEntry) Validate(fifo bool, maxSize int) error {
	if err := ValidateBody(e.Body); err != nil {
		return err
	}
	if err := ValidateMessageAttributes(e.Attributes); err != nil {
		return err
	}
	if err := ValidateSystemAttributes(e.SystemAttributes); err != nil {
		return err
	}
	if size := MessageSize(e.Body, e.Attributes); size > maxSize {
		return Errorf(ErrInvalidParameterValue, "One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", maxSize)
	}
	if d := e.DelaySeconds; d != nil {
		if *d < 0 || *d > MaxDelaySeconds {
			return InvalidParameter("DelaySeconds", *d, "DelaySeconds must be >= 0 and <= 900")
		}
		if fifo && *d != 0 {
			return InvalidParameter("DelaySeconds", *d, "The request include parameter that is not valid for this queue type.")
		}
	}
	if e.MessageGroupID != "" {
		if err := ValidateFIFOToken("MessageGroupId", e.MessageGroupID); err != nil {
			return err
		}
	}
	if e.MessageDeduplicationID != "" {
		if !fifo {
			return InvalidParameter("MessageDeduplicationId", e.MessageDeduplicationID, "The request include parameter that is not valid for this queue type.")
		}
		if err := ValidateFIFOToken("MessageDeduplicationId", e.MessageDeduplicationID); err != nil {
			return err
		}
	}
	return nil
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
