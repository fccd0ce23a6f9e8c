package alarms

import (
	"encoding/json"
	"net/http"
)

// List is the JSON of GET /tidemq/alarms.
type List struct {
	Alarms []Alarm `json:"alarms"`
}

// Handler serves GET /tidemq/alarms: every evaluated alarm, firing first.
func (e *Evaluator) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(List{Alarms: e.Alarms()})
	})
}
