package dlq

import (
	"github.com/schollz/progressbar/v3"
)

// bar is a progress bar on the client's Err writer, or nothing when
// progress is off. A nil *bar does nothing.
type bar struct {
	pb   *progressbar.ProgressBar
	done bool
}

// newBar starts a bar of total steps (-1: unknown).
func (c *Client) newBar(total int64, what string) *bar {
	if !c.Progress {
		return nil
	}
	return &bar{pb: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(c.errw()),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("msg"),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetPredictTime(true),
	)}
}

func (b *bar) add(n int) {
	if b != nil && !b.done {
		_ = b.pb.Add(n)
	}
}

func (b *bar) set(n int64) {
	if b != nil && !b.done {
		if n > b.pb.GetMax64() && b.pb.GetMax64() >= 0 {
			b.pb.ChangeMax64(n)
		}
		_ = b.pb.Set64(n)
	}
}

func (b *bar) finish() {
	if b != nil && !b.done {
		b.done = true
		_ = b.pb.Finish()
	}
}
