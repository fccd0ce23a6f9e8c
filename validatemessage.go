package tidemq

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules of a message, whichever call carries it: its body, its
// attributes (message and system), the FIFO tokens, and the rules of a
// send that need the queue (ValidateFIFO, SendEntry.Validate).

// ValidateBody checks a message body: at least one character, only the
// characters XML 1.0 allows (#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD
// #x10000-#x10FFFF).
func ValidateBody(body string) error {
	if body == "" {
		return MissingParameter("MessageBody")
	}
	// Printable ASCII, tab, LF and CR are allowed: checked eight bytes at
	// a time, the runes only from the first byte that is not one of those.
	start := asciiPrefix(body)
	for i, r := range body[start:] {
		i += start
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

// asciiPrefix returns the length of body's longest prefix of printable
// ASCII (0x20 to 0x7F), tab, LF and CR. A word of eight bytes none of
// which has its top bit set or is below 0x20 is passed whole; a word with
// a byte below 0x20 (a line break, say) is checked byte by byte.
func asciiPrefix(body string) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(body); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(body[i : i+8]))
		if w&highs != 0 {
			break // not ASCII: the rune loop takes it from the first such byte
		}
		// Not zero exactly when some byte is below 0x20: the lowest such
		// byte sets its top bit, and a borrow only adds bits above it.
		if (w-0x20*ones)&^w&highs == 0 {
			continue
		}
		for j := i; j < i+8; j++ {
			if c := body[j]; c < 0x20 && c != 0x9 && c != 0xA && c != 0xD {
				return j
			}
		}
	}
	for ; i < len(body); i++ {
		if c := body[i]; c >= 0x80 || c < 0x20 && c != 0x9 && c != 0xA && c != 0xD {
			return i
		}
	}
	return len(body)
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
