package engine

import (
	"time"

	"github.com/tidemq/tidemq"
)

// stamp is an instant as nanoseconds since the Unix epoch, 0 meaning
// never (tidemq.Stamp, the instants of the stored record).
type stamp = tidemq.Stamp

func stampOf(t time.Time) stamp { return tidemq.StampOf(t) }
