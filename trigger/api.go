package trigger

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/adminjson"
)

// APIPath is where Handler serves the admin API.
const APIPath = "/tidemq/triggers"

// Handler serves the admin API of the triggers:
//
//	GET    /tidemq/triggers               {"Triggers":[Status...]}
//	POST   /tidemq/triggers               create from a Config: 201 Status
//	GET    /tidemq/triggers/{name}        Status
//	PUT    /tidemq/triggers/{name}        update: the fields given replace
//	PATCH  /tidemq/triggers/{name}        the current ones (both methods);
//	                                      a Status's read-only fields are ignored
//	POST   /tidemq/triggers/{name}/enable
//	POST   /tidemq/triggers/{name}/disable
//	DELETE /tidemq/triggers/{name}        204
//
// Errors are {"error": "...", "code": "..."} (api/adminjson) with 400
// (InvalidTrigger, or the broker's error for an unknown queue), 404
// (TriggerNotFound) or 409 (TriggerExists).
//
// No response shows a secret of a target: each header value and the
// userinfo of the URL read "********" (Redacted), and SecretsDigest tells
// whether the secrets are those a client has (see SecretsDigest):
//
//	"Target": {"URL": "https://********@fn.example/", "Headers": {"Authorization": "********"}},
//	"SecretsDigest": "pbkdf2-sha256:3f0c...",
//
// An update that gives Target.Headers replaces the headers as a whole (one
// left out is removed); "********" as a header value or as the URL's
// userinfo keeps the stored secret, so GET-modify-PUT works, as long as
// the URL stays on the same origin (scheme, host and port): a target moved
// to another origin must be given its secrets again.
func (m *Manager) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+APIPath, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"Triggers": m.List()})
	})
	mux.HandleFunc("POST "+APIPath, func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			writeError(w, err)
			return
		}
		var c Config
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := decodeOne(dec, &c); err != nil {
			writeError(w, invalid("the body is not a trigger: %v", err))
			return
		}
		c.Queue = m.requestQueue(r, c.Queue)
		s, err := m.Create(r.Context(), c)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, s)
	})
	mux.HandleFunc("GET "+APIPath+"/{name}", func(w http.ResponseWriter, r *http.Request) {
		s, err := m.Get(r.PathValue("name"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, s)
	})
	update := func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			writeError(w, err)
			return
		}
		// A Status is accepted, so that what a GET returned can be
		// changed and written back; its read-only fields (State, Stats,
		// RecentInvocations...) are ignored.
		var c Status
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := decodeOne(dec, &c); err != nil {
			writeError(w, invalid("the body is not a trigger update: %v", err))
			return
		}
		if c.Queue != "" {
			if body, err = m.withRequestQueue(r, body); err != nil {
				writeError(w, err)
				return
			}
		}
		s, err := m.Update(r.Context(), r.PathValue("name"), body)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, s)
	}
	mux.HandleFunc("PUT "+APIPath+"/{name}", update)
	mux.HandleFunc("PATCH "+APIPath+"/{name}", update)
	for action, on := range map[string]bool{"enable": true, "disable": false} {
		mux.HandleFunc("POST "+APIPath+"/{name}/"+action, func(w http.ResponseWriter, r *http.Request) {
			s, err := m.SetEnabled(r.Context(), r.PathValue("name"), on)
			if err != nil {
				writeError(w, err)
				return
			}
			writeJSON(w, http.StatusOK, s)
		})
	}
	mux.HandleFunc("DELETE "+APIPath+"/{name}", func(w http.ResponseWriter, r *http.Request) {
		if err := m.Delete(r.PathValue("name")); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// requestQueue names queue as the broker knows it for the region r is
// for (Options.RequestRegion): "orders" asked for in eu-west-1 is
// "eu-west-1/orders" unless that is the home region. A name that gives its
// region already is kept, and the home region written out of it.
func (m *Manager) requestQueue(r *http.Request, queue string) string {
	home := m.o.HomeRegion
	if home == "" || queue == "" {
		return queue
	}
	if m.o.RequestRegion != nil && !strings.Contains(queue, "/") {
		queue = tidemq.RegionalQueueName(m.o.RequestRegion(r), home, queue)
	}
	return tidemq.CanonicalQueueName(queue, home)
}

// withRequestQueue rewrites the Queue of an update's body with
// requestQueue, leaving the rest of it as it was sent.
func (m *Manager) withRequestQueue(r *http.Request, body []byte) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, invalid("the body is not a trigger update: %v", err)
	}
	var q string
	if err := json.Unmarshal(fields["Queue"], &q); err != nil {
		return nil, invalid("Queue is not a string: %v", err)
	}
	fields["Queue"], _ = json.Marshal(m.requestQueue(r, q))
	return json.Marshal(fields)
}

const maxBody = 1 << 20

// decodeOne decodes the one JSON value a body must be: anything after it
// but white space is refused, as the admin guard (authz) refuses it; a
// body read two ways could be checked against one trigger and create
// another.
func decodeOne(dec *json.Decoder, v any) error {
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, invalid("read body: %v", err)
	}
	if len(b) > maxBody {
		return nil, invalid("the body is larger than %d bytes", maxBody)
	}
	return b, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeError answers as every admin route does (api/adminjson), the
// manager's errors put into the catalogue: invalid settings
// InvalidTrigger (400), no such trigger TriggerNotFound (404), a name that
// is taken TriggerExists (409); a broker's error keeps its own entry.
func writeError(w http.ResponseWriter, err error) {
	var inv *InvalidConfigError
	var nf *NotFoundError
	var ex *ExistsError
	switch {
	case errors.As(err, &inv):
		err = tidemq.Errorf(tidemq.ErrInvalidTrigger, "%s", inv.Error())
	case errors.As(err, &nf):
		err = tidemq.Errorf(tidemq.ErrTriggerNotFound, "%s", nf.Error())
	case errors.As(err, &ex):
		err = tidemq.Errorf(tidemq.ErrTriggerExists, "%s", ex.Error())
	}
	adminjson.WriteError(w, err)
}
