package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// mixed runs producers at a fixed total rate (Config.Rate messages per
// second, single SendMessage calls) next to consumers that receive (10,
// long-polling) and batch-delete, for Config.Duration; then it drains the
// queue. The latencies reported are the sends': the steady-state send
// latency at that load.
func (b *runner) mixed(ctx context.Context) (Result, error) {
	if b.cfg.Rate <= 0 {
		return Result{}, fmt.Errorf("the mixed scenario needs a rate (--rate)")
	}
	dur := b.cfg.Duration
	if dur <= 0 {
		dur = 10 * time.Second
	}
	url, cleanup, err := b.createQueue(ctx, "mixed", false)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	led := newLedger()
	rec := &recorder{progress: b.cfg.Progress}
	// Four producers per client: enough that a stall of a few milliseconds
	// does not leave every producer busy (the pacer would then skip sends).
	producers, consumers := max(4, 4*b.cfg.Clients), max(1, b.cfg.Clients/2)
	tokens := make(chan int64, producers)
	stop := make(chan struct{})
	var skipped atomic.Int64
	go func() {
		// The pacer: every millisecond it releases the tokens due by then
		// (Rate per second since the start). A token no producer is free to
		// take is skipped and counted, not queued: queued tokens would hide
		// the wait in the latencies (coordinated omission).
		defer close(tokens)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		begin := time.Now()
		var released int64
		for {
			select {
			case <-tick.C:
				due := int64(time.Since(begin).Seconds() * float64(b.cfg.Rate))
				for ; released < due; released++ {
					select {
					case tokens <- released:
					default:
						skipped.Add(1)
					}
				}
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < producers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range tokens {
				id := "s" + strconv.FormatInt(i, 10)
				led.add(id) // before the send: a consumer may see it first
				t := time.Now()
				err := b.sendIDs(ctx, url, []string{id}, false, "")
				if err != nil {
					led.forget(id)
				}
				rec.observe(t, 1, err)
			}
		}()
	}
	var consuming atomic.Bool
	consuming.Store(true)
	var cwg sync.WaitGroup
	for w := 0; w < consumers; w++ {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for consuming.Load() && ctx.Err() == nil {
				msgs, err := b.c.Receive(ctx, url, 10, 1)
				if err != nil {
					rec.errors.Add(1)
					pause(ctx, retryPause(1))
					continue
				}
				if len(msgs) == 0 {
					continue
				}
				for _, m := range msgs {
					led.seen(idOf(m.Body))
				}
				if err := b.delete(ctx, url, msgs, true); err != nil {
					rec.errors.Add(1)
				}
			}
		}()
	}
	start := time.Now()
	select {
	case <-time.After(dur):
	case <-ctx.Done():
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	consuming.Store(false)
	cwg.Wait()
	res := rec.result(fmt.Sprintf("mixed@%d/s send", b.cfg.Rate), elapsed)
	res.Skipped = skipped.Load()
	_, err = b.consume(ctx, url, led, nil, true) // what the consumers had not reached yet
	res.Lost, res.Duplicates = led.lost(), led.dups
	return res, err
}

// depth measures ReceiveMessage (10) + DeleteMessageBatch of Config.Count
// messages from a queue that holds at least Config.Prefill messages
// throughout: it is filled to Prefill + Count first, so the backlog never
// drops below the depth being measured. Run at several depths, it shows
// whether the cost grows with the backlog. The Prefill messages not
// consumed must all still be there afterwards.
func (b *runner) depth(ctx context.Context) (Result, error) {
	depth := b.cfg.Prefill
	if depth <= 0 {
		depth = 100000
	}
	n := b.cfg.Count
	if n <= 0 {
		n = 10000
	}
	url, cleanup, err := b.createQueue(ctx, "depth", false)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	led := newLedger()
	if err := b.prefill(ctx, url, depth+n, led, 0); err != nil {
		return Result{}, err
	}
	rec := &recorder{progress: b.cfg.Progress}
	var got, reserved atomic.Int64
	var gaveUp atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < b.cfg.Clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failures := 0
			for got.Load() < int64(n) && ctx.Err() == nil && gaveUp.Load() == nil {
				// Reserve what this receive may take, so that together the
				// workers never take more than n and the rest stays queued.
				want := claim(&reserved, int64(n))
				if want == 0 {
					return
				}
				t := time.Now()
				msgs, err := b.c.Receive(ctx, url, int(want), 1)
				if err != nil {
					reserved.Add(-want)
					rec.observe(t, 0, err)
					if failures++; failures >= maxReceiveFailures {
						gaveUp.CompareAndSwap(nil, fmt.Errorf("receive failed %d times in a row: %w", failures, err))
						return
					}
					pause(ctx, retryPause(failures))
					continue
				}
				failures = 0
				reserved.Add(int64(len(msgs)) - want)
				if len(msgs) == 0 {
					continue
				}
				for _, m := range msgs {
					led.seen(idOf(m.Body))
				}
				got.Add(int64(len(msgs)))
				rec.observe(t, len(msgs), b.delete(ctx, url, msgs, true))
			}
		}()
	}
	wg.Wait()
	res := rec.result(fmt.Sprintf("depth=%d receive+delete", depth), time.Since(start))
	res.Duplicates = led.dups
	if err, ok := gaveUp.Load().(error); ok {
		return res, err
	}
	left, inflight, err := b.c.Counts(ctx, url)
	if err != nil {
		return res, err
	}
	if want := int64(depth+n) - got.Load(); left+inflight != want {
		res.Lost = want - left - inflight
	}
	return res, ctx.Err()
}

// claim reserves up to 10 of the n messages a run may take and returns how
// many it reserved (0 when all are reserved).
func claim(reserved *atomic.Int64, n int64) int64 {
	for {
		r := reserved.Load()
		k := min(10, n-r)
		if k <= 0 {
			return 0
		}
		if reserved.CompareAndSwap(r, r+k) {
			return k
		}
	}
}
