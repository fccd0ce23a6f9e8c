package tidemq

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestPageQueueNamesWalksSortedPages(t *testing.T) {
	names := []string{"c", "a", "e", "b", "d"}
	two := 2
	var got [][]string
	token := ""
	for i := 0; i < 10; i++ {
		res, err := PageQueueNames(append([]string(nil), names...), &two, token)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Names)
		if res.NextToken == "" {
			break
		}
		token = res.NextToken
	}
	want := [][]string{{"a", "b"}, {"c", "d"}, {"e"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pages = %v, want %v", got, want)
	}
}

func TestPageQueueNamesExactFitHasNoToken(t *testing.T) {
	two := 2
	res, err := PageQueueNames([]string{"b", "a"}, &two, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Names, []string{"a", "b"}) || res.NextToken != "" {
		t.Fatalf("got %v token %q, want [a b] and no token", res.Names, res.NextToken)
	}
}

func TestPageQueueNamesTokenOfDeletedName(t *testing.T) {
	// The page after "b" starts at the first name after "b", even when
	// "b" itself is gone by then.
	one := 1
	first, err := PageQueueNames([]string{"a", "b", "c"}, &one, "")
	if err != nil {
		t.Fatal(err)
	}
	first, err = PageQueueNames([]string{"a", "b", "c"}, &one, first.NextToken)
	if err != nil {
		t.Fatal(err)
	}
	res, err := PageQueueNames([]string{"a", "c"}, &one, first.NextToken)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Names, []string{"c"}) {
		t.Fatalf("after deleted b: %v, want [c]", res.Names)
	}
}

func TestPageQueueNamesUnpagedCapsAtMax(t *testing.T) {
	names := make([]string, MaxListQueuesResults+5)
	for i := range names {
		names[i] = fmt.Sprintf("q%05d", i)
	}
	res, err := PageQueueNames(names, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Names) != MaxListQueuesResults || res.NextToken != "" {
		t.Fatalf("unpaged: %d names, token %q; want %d and no token", len(res.Names), res.NextToken, MaxListQueuesResults)
	}
}

func TestPageQueueNamesBadToken(t *testing.T) {
	one := 1
	_, err := PageQueueNames([]string{"a"}, &one, "not base64!")
	if !errors.Is(err, &Error{Code: ErrInvalidParameterValue}) {
		t.Fatalf("bad token: %v, want InvalidParameterValue", err)
	}
}

func TestPageSnapshotsWalksPages(t *testing.T) {
	snaps := []QueueSnapshot{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}, {Name: "e"}}
	var got [][]string
	token := ""
	for i := 0; i < 10; i++ {
		page, next, err := PageSnapshots(snaps, 2, token)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range page {
			names = append(names, s.Name)
		}
		got = append(got, names)
		if next == "" {
			break
		}
		token = next
	}
	want := [][]string{{"a", "b"}, {"c", "d"}, {"e"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pages = %v, want %v", got, want)
	}
	if _, _, err := PageSnapshots(snaps, 2, "%%%"); err == nil {
		t.Error("a bad token was accepted")
	}
}
