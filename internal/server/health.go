package server

import (
	"fmt"
	"net/http"

	"github.com/tidemq/tidemq"
)

// Health answers GET /health: 200 while the broker can serve, 503 with the
// reason when it cannot.
func Health(b tidemq.HealthChecker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := b.Healthy(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "{\"status\":\"unavailable\",\"error\":%q}\n", err.Error())
			return
		}
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
}
