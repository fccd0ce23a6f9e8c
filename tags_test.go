package tidemq

import (
	"reflect"
	"strconv"
	"testing"
)

func TestTagQueueApplyToOverwritesAndAdds(t *testing.T) {
	tags := map[string]string{"env": "dev", "team": "a"}
	p := TagQueueParams{Tags: map[string]string{"env": "prod", "cost": "42"}}
	if err := p.ApplyTo("q", tags); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"env": "prod", "team": "a", "cost": "42"}
	if !reflect.DeepEqual(tags, want) {
		t.Fatalf("tags = %v, want %v", tags, want)
	}
}

func TestTagQueueApplyToTooManyChangesNothing(t *testing.T) {
	tags := map[string]string{}
	for i := 0; i < MaxTagsPerQueue; i++ {
		tags["k"+strconv.Itoa(i)] = "v"
	}
	p := TagQueueParams{Tags: map[string]string{"k0": "changed", "extra": "v"}}
	if err := p.ApplyTo("q", tags); !HasCode(err, ErrInvalidParameterValue) {
		t.Fatalf("one tag too many: %v, want InvalidParameterValue", err)
	}
	if len(tags) != MaxTagsPerQueue || tags["k0"] != "v" {
		t.Fatalf("a refused TagQueue changed the tags: %v", tags)
	}
}

func TestUntagQueueApplyToIgnoresUnknownKeys(t *testing.T) {
	tags := map[string]string{"env": "dev", "team": "a"}
	p := UntagQueueParams{TagKeys: []string{"env", "nope"}}
	p.ApplyTo(tags)
	if !reflect.DeepEqual(tags, map[string]string{"team": "a"}) {
		t.Fatalf("tags = %v, want only team", tags)
	}
}
