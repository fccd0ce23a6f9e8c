package alarms

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/adminjson"
)

// List is the JSON of GET /tidemq/alarms: a page of alarms, and the token
// of the next page ("" after the last).
type List struct {
	Alarms    []Alarm `json:"alarms"`
	NextToken string  `json:"nextToken,omitempty"`
}

// Handler serves GET /tidemq/alarms: the evaluated alarms, firing first,
// a page at a time (?limit=, default PageSize, at most MaxPageSize;
// ?nextToken= from the previous page's nextToken).
func (e *Evaluator) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		limit := PageSize
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxPageSize {
				adminjson.WriteError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "limit must be 1 to %d", MaxPageSize))
				return
			}
			limit = n
		}
		page, next, err := e.Page(limit, r.URL.Query().Get("nextToken"))
		if err != nil {
			adminjson.WriteError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "invalid nextToken"))
			return
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(List{Alarms: page, NextToken: next})
	})
}
