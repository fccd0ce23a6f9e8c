package sns

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxTags is the most tags a topic can have.
const MaxTags = 50

// Tag is a topic tag.
type Tag struct {
	Key, Value string
}

// checkTags validates tag keys (1–128 characters) and values (0–256), as
// botocore's TagKey and TagValue shapes bound them.
func checkTags(tags map[string]string) error {
	for k, v := range tags {
		if err := checkTagKey(k); err != nil {
			return err
		}
		if utf8.RuneCountInString(v) > 256 {
			return InvalidParameter("Tags", fmt.Sprintf("The value of tag %q is longer than 256 characters", k))
		}
	}
	return nil
}

func checkTagKey(k string) error {
	if k == "" {
		return InvalidParameter("Tags", "A tag key must not be empty")
	}
	if utf8.RuneCountInString(k) > 128 {
		return InvalidParameter("Tags", fmt.Sprintf("The tag key %q is longer than 128 characters", k))
	}
	return nil
}

// tagged resolves the ResourceArn of a tagging action: InvalidParameter for
// a malformed ARN, ResourceNotFound for a topic that does not exist.
func (s *Service) tagged(arn string) (*Topic, error) {
	if arn == "" {
		return nil, InvalidParameter("ResourceArn", "")
	}
	if n := len(strings.Split(arn, ":")); n < 6 {
		return nil, ShortARN("ResourceArn", n)
	}
	t, ok, err := s.store.readTopic(arn)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ResourceNotFound("Resource does not exist")
	}
	return t, nil
}

// TagResource adds tags to a topic, overwriting the values of keys it has.
// A topic holds at most MaxTags tags (TagLimitExceeded).
func (s *Service) TagResource(_ context.Context, p TagResourceParams) error {
	arn, tags := p.ResourceARN, p.Tags
	if _, err := s.tagged(arn); err != nil {
		return err
	}
	if len(tags) == 0 {
		return InvalidParameter("Tags", "")
	}
	if err := checkTags(tags); err != nil {
		return err
	}
	return s.store.updateTopic(arn, func(t *Topic) error {
		merged := copyMap(t.Tags)
		if merged == nil {
			merged = map[string]string{}
		}
		for k, v := range tags {
			merged[k] = v
		}
		if len(merged) > MaxTags {
			return TagLimitExceeded()
		}
		t.Tags = merged
		return nil
	})
}

// UntagResource removes tags from a topic; keys it does not have are
// ignored.
func (s *Service) UntagResource(_ context.Context, p UntagResourceParams) error {
	arn, keys := p.ResourceARN, p.TagKeys
	if _, err := s.tagged(arn); err != nil {
		return err
	}
	if len(keys) == 0 {
		return InvalidParameter("TagKeys", "")
	}
	for _, k := range keys {
		if err := checkTagKey(k); err != nil {
			return err
		}
	}
	return s.store.updateTopic(arn, func(t *Topic) error {
		t.Tags = copyMap(t.Tags)
		for _, k := range keys {
			delete(t.Tags, k)
		}
		if len(t.Tags) == 0 {
			t.Tags = nil
		}
		return nil
	})
}

// ListTagsForResource lists a topic's tags, ordered by key.
func (s *Service) ListTagsForResource(_ context.Context, p ListTagsForResourceParams) ([]Tag, error) {
	arn := p.ResourceARN
	t, err := s.tagged(arn)
	if err != nil {
		return nil, err
	}
	out := make([]Tag, 0, len(t.Tags))
	for k, v := range t.Tags {
		out = append(out, Tag{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
