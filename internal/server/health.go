package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/tidemq/tidemq"
)

// Health answers GET /health: 200 while the broker can serve, 503 when it
// cannot. Why it cannot (which may name the database's user, host or a
// path) goes to the log, and into the answer only for a signed caller:
// signed is true when the route is verified (--auth without --auth-exempt
// health).
func Health(b tidemq.HealthChecker, signed bool, log *slog.Logger) http.Handler {
	var mu sync.Mutex
	var last string // the reason logged last, so that a probe every second does not flood the log
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		err := b.Healthy()
		mu.Lock()
		if err != nil && err.Error() != last {
			log.Warn("unhealthy: /health answers 503", "err", err)
		} else if err == nil && last != "" {
			log.Info("healthy again: /health answers 200")
		}
		last = ""
		if err != nil {
			last = err.Error()
		}
		mu.Unlock()
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			if signed {
				fmt.Fprintf(w, "{\"status\":\"unavailable\",\"error\":%q}\n", err.Error())
			} else {
				fmt.Fprintln(w, `{"status":"unavailable"}`)
			}
			return
		}
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
}
