package main

import (
	"strings"
	"testing"
	"time"
)

func TestClusterFlagsChecked(t *testing.T) {
	for _, c := range []struct {
		ttl, reload time.Duration
		want        string
	}{
		{15 * time.Second, 2 * time.Second, ""},
		{3 * time.Second, 300 * time.Millisecond, ""},
		{time.Second, 2 * time.Second, "--lease-ttl must be at least 3s"},
		{15 * time.Second, 0, "--cluster-reload must be positive"},
	} {
		err := (&clusterOptions{leaseTTL: c.ttl, reload: c.reload}).check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v %v: %v", c.ttl, c.reload, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v %v: %v, want %q", c.ttl, c.reload, err, c.want)
		}
	}
}
