package metrics

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/common/expfmt"
)

// sharedScrape lets one scrape be computed at a time. A scrape is a walk
// over every queue, and the exposition it builds is the largest allocation
// the server makes on request: scrapes that arrive while one is being
// computed wait for it and are answered with the same bytes, so N
// concurrent scrapes cost about one (the issue this answers: six
// concurrent scrapes of 100,000 queues took the process to 4 GB). The
// next scrape after it is computed afresh: nothing is cached past the
// scrapes that waited.
type sharedScrape struct {
	mu  sync.Mutex
	cur *scrapeResult // the scrape being computed; nil when none is
	// waiting counts the requests waiting for another's scrape (tests).
	waiting atomic.Int32
}

// scrapeResult is one computed scrape, shared by the requests that waited
// for it; read-only once done is closed (but for gz, made once).
type scrapeResult struct {
	done   chan struct{}
	body   []byte
	err    error
	gzOnce sync.Once
	gz     []byte
}

// gzipped returns the body compressed, compressing it on first use.
func (r *scrapeResult) gzipped() []byte {
	r.gzOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		_, _ = zw.Write(r.body)
		_ = zw.Close()
		r.gz = b.Bytes()
	})
	return r.gz
}

// scrape returns the scrape being computed, once it is done, or computes
// one. It gives up waiting when done is closed (the client went away).
func (m *Metrics) scrape(cancel <-chan struct{}) *scrapeResult {
	s := &m.scrapes
	s.mu.Lock()
	if r := s.cur; r != nil {
		s.mu.Unlock()
		s.waiting.Add(1)
		defer s.waiting.Add(-1)
		select {
		case <-r.done:
			return r
		case <-cancel:
			return nil
		}
	}
	r := &scrapeResult{done: make(chan struct{})}
	s.cur = r
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
		close(r.done)
	}()
	r.body, r.err = m.render()
	return r
}

// render gathers the registry and encodes it in the text format.
func (m *Metrics) render() ([]byte, error) {
	mfs, err := m.reg.Gather()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.FmtText)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// serveScrape answers GET /metrics with the shared scrape.
func (m *Metrics) serveScrape(w http.ResponseWriter, req *http.Request) {
	r := m.scrape(req.Context().Done())
	if r == nil {
		return // the client went away while waiting
	}
	if r.err != nil {
		http.Error(w, "An error has occurred while serving metrics:\n\n"+r.err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", string(expfmt.FmtText))
	body := r.body
	if acceptsGzip(req.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = r.gzipped()
	}
	_, _ = w.Write(body)
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip
// (listed, without q=0).
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(enc), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return !(q == "q=0" || strings.HasPrefix(q, "q=0.") && strings.Trim(q[len("q=0."):], "0") == "")
	}
	return false
}
