package sns

import (
	"strconv"
	"testing"
)

// The cache hands out one compiled policy per scope and text, keeps a bad
// policy out, and starts over when full.
func TestFilterCache(t *testing.T) {
	var c filterCache
	a, err := c.compile(`{"color":["red"]}`, "")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.compile(`{"color":["red"]}`, ""); b != a {
		t.Error("the same policy was compiled twice")
	}
	if b, _ := c.compile(`{"color":["red"]}`, "MessageBody"); b == a {
		t.Error("another scope shared the compiled policy")
	}
	if _, err := c.compile(`{"color":`, ""); err == nil {
		t.Error("a malformed policy compiled")
	}
	if !a.Match("", map[string]Attribute{"color": {DataType: "String", StringValue: "red"}}) {
		t.Error("the cached policy does not match what it should")
	}
	for i := 0; i < maxCachedFilters+10; i++ {
		if _, err := c.compile(`{"n":[`+strconv.Itoa(i)+`]}`, ""); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) > maxCachedFilters {
		t.Errorf("cache holds %d policies, bound %d", len(c.m), maxCachedFilters)
	}
}
