package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startPprof serves Go's profiling endpoints (/debug/pprof/...) on their
// own listener, so that they are never exposed on the API port, and only on
// a loopback address: they are not authenticated, and a heap profile holds
// whatever the server holds, credentials included. /debug/pprof/cmdline,
// which would print --credentials, is left out. It returns a function that
// closes the listener.
func startPprof(addr string, log *slog.Logger) (func(), error) {
	if !isLoopback(addr) {
		return nil, fmt.Errorf("--pprof-listen %s: the profiling endpoints are not authenticated and show the server's memory; give a loopback address such as 127.0.0.1:6060", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("profiling endpoints listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
