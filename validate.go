package tidemq

import (
	"fmt"
	"strings"
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
// attributes (at most 10; names of [A-Za-z0-9_.-], no AWS./Amazon. prefix,
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
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
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
			return Errorf(ErrInvalidParameterValue, "The %s '%s' with type '%s' must use field 'String'.", what, name, base)
		}
		if base == "Number" && !isNumber(v.StringValue) {
			return Errorf(ErrInvalidParameterValue, "Could not cast message attribute '%s' value to number.", name)
		}
		// Bytes that are not UTF-8 are invalid characters too (ranging over
		// them yields U+FFFD, which is allowed).
		if !utf8.ValidString(v.StringValue) {
			return Errorf(ErrInvalidParameterValue, "%s '%s' contains invalid characters.", what, name)
		}
		for _, r := range v.StringValue {
			if !allowedRune(r) {
				return Errorf(ErrInvalidParameterValue, "%s '%s' contains invalid characters.", what, name)
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
	if len(ids) == 0 {
		return Errorf(ErrEmptyBatchRequest, "There should be at least one %s in the request.", "entry")
	}
	if len(ids) > MaxBatchEntries {
		return Errorf(ErrTooManyEntriesInBatchRequest, "Maximum number of entries per request are %d. You have sent %d.", MaxBatchEntries, len(ids))
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !validBatchID(id) {
			return Errorf(ErrInvalidBatchEntryID, "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		if seen[id] {
			return Errorf(ErrBatchEntryIdsNotDistinct, "Id %s repeated.", id)
		}
		seen[id] = true
	}
	return nil
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
			return Errorf(ErrInvalidParameterValue, "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.")
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
			return Errorf(ErrInvalidParameterValue, "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.")
		}
		return Errorf(ErrInvalidParameterValue, "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
	}
	return nil
}
