package tidemq

import (
	"strings"
)

// The rules of names and ids: queue names, batch entry Ids, tags and
// permission labels.

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

// TooManyTags is AWS's error for a CreateQueue or TagQueue that would
// leave more than MaxTagsPerQueue tags on the queue.
func TooManyTags(queue string) error {
	return Errorf(ErrInvalidParameterValue, "Too many tags added for queue %s.", queue)
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
