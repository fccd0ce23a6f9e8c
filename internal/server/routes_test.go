package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/api/frontdoor"
)

// The console's files are the only public routes, and its data API is an
// admin route for every method it answers.
func TestConsoleRoutesAccess(t *testing.T) {
	d := frontdoor.New(frontdoor.Config{})
	h := http.NotFoundHandler()
	Mount(d, Routes{Health: h, Metrics: h, Queues: h, Alarms: h, Trigger: h, Backup: h, Protocols: h,
		ConsoleAssets: h, ConsoleAPI: h}, map[string]bool{})
	got := map[string]frontdoor.Access{}
	for _, r := range d.Routes() {
		got[r.Pattern] = r.Access
		if r.Access == frontdoor.Public && r.Pattern != "GET /console/" {
			t.Errorf("%s is public: only the console's files may be", r.Pattern)
		}
		if strings.Contains(r.Pattern, "/console/api") && r.Access != frontdoor.Admin {
			t.Errorf("%s is %s, want admin", r.Pattern, r.Access)
		}
	}
	for pattern, want := range map[string]frontdoor.Access{
		"GET /console/": frontdoor.Public, "GET /console/api/": frontdoor.Admin, "POST /console/api/": frontdoor.Admin,
	} {
		if got[pattern] != want {
			t.Errorf("%s: %v, want %v", pattern, got[pattern], want)
		}
	}
}
