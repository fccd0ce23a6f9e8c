package engine_test

import (
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage"
)

// backlogOptions are the engine's options in BenchmarkBacklog: as `tidemq
// serve` opens it on its disk store. (A run of the benchmark against an
// older commit replaces this file.)
func backlogOptions(s storage.Store) engine.Options {
	return engine.Options{Store: s, SweepInterval: -1, Logger: quiet, PageSize: engine.DefaultPageSize}
}
