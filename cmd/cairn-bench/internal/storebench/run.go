package storebench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

// Run measures store and its baseline on the same database and returns the
// rows of the table. The store should be fresh (empty) for stable numbers.
func Run(ctx context.Context, backend string, store eventstore.Store, base Baseline, cfg Config) ([]Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := base.Reset(ctx); err != nil {
		return nil, fmt.Errorf("baseline reset: %w", err)
	}
	var out []Result
	add := func(scenario, unit string, cairn, raw float64) {
		out = append(out, Result{Backend: backend, Scenario: scenario, Unit: unit, Cairn: cairn, Raw: raw})
	}

	for _, sc := range []struct {
		key     string
		name    string
		writers int
		batch   int
	}{
		{ScenarioAppendOne, "append, 1 writer x 1 event", 1, 1},
		{ScenarioAppendWriters, fmt.Sprintf("append, %d writers x 1 event", cfg.Writers), cfg.Writers, 1},
		{ScenarioAppendBatch, "append, 1 writer x batch of 100", 1, 100},
	} {
		if !cfg.runs(sc.key) {
			continue
		}
		// Alternate short Cairn and raw runs so that background noise on a
		// shared machine falls on both sides alike.
		var cairn, raw float64
		for round := 0; round < cfg.rounds(); round++ {
			cfg.progress("%s: %s (round %d/%d)", backend, sc.name, round+1, cfg.rounds())
			c, err := appendThroughput(ctx, sc.writers, sc.batch, cfg.Duration/time.Duration(cfg.rounds()), func(ctx context.Context, w, k int, evs []eventstore.EventData) error {
				stream := fmt.Sprintf("bench-%d-%d-%d-%d-%d", round, sc.writers, sc.batch, w, k/100)
				_, err := store.Append(ctx, stream, eventstore.Exact(int64(k%100*sc.batch)-1), evs...)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sc.name, err)
			}
			r, err := rawThroughput(ctx, round, sc.writers, sc.batch, cfg.Duration/time.Duration(cfg.rounds()), base)
			if err != nil {
				return nil, fmt.Errorf("%s raw: %w", sc.name, err)
			}
			cairn += c / float64(cfg.rounds())
			raw += r / float64(cfg.rounds())
		}
		add(sc.name, "events/s", cairn, raw)
	}

	if cfg.runs(ScenarioReplay) {
		cfg.progress("%s: replay of %d events (loading)", backend, cfg.ReplayEvents)
		cairnReplay, rawReplay, err := replay(ctx, store, base, cfg.ReplayEvents, cfg.progress)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		add(fmt.Sprintf("replay ReadAll over %d events", cfg.ReplayEvents), "events/s", cairnReplay, rawReplay)
	}

	if cfg.runs(ScenarioLag) {
		cfg.progress("%s: subscription lag at %d appends/s", backend, cfg.LagRate)
		lag, commit, err := subscriptionLag(ctx, store, cfg.LagRate, cfg.LagDuration)
		if err != nil {
			return nil, fmt.Errorf("lag: %w", err)
		}
		add(fmt.Sprintf("subscription lag p50 at %d/s (raw: append latency)", cfg.LagRate), "ms", ms(lag[0]), ms(commit[0]))
		add(fmt.Sprintf("subscription lag p99 at %d/s (raw: append latency)", cfg.LagRate), "ms", ms(lag[1]), ms(commit[1]))
	}
	return out, nil
}

// appendThroughput runs writers goroutines, each appending batches of batch
// events in a loop for d, and returns events/s. k counts a writer's appends.
func appendThroughput(ctx context.Context, writers, batch int, d time.Duration, appendFn func(ctx context.Context, w, k int, evs []eventstore.EventData) error) (float64, error) {
	var total atomic.Int64
	var firstErr error
	var once sync.Once
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			evs := make([]eventstore.EventData, batch)
			for k := 0; time.Now().Before(deadline); k++ {
				for i := range evs {
					evs[i] = newEvent(k*batch + i)
				}
				if err := appendFn(ctx, w, k, evs); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				total.Add(int64(batch))
			}
		}(w)
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(total.Load()) / time.Since(start).Seconds(), nil
}

func rawThroughput(ctx context.Context, round, writers, batch int, d time.Duration, base Baseline) (float64, error) {
	var total atomic.Int64
	var firstErr error
	var once sync.Once
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rows := make([]Row, batch)
			for k := 0; time.Now().Before(deadline); k++ {
				stream := fmt.Sprintf("raw-%d-%d-%d-%d-%d", round, writers, batch, w, k/100)
				for i := range rows {
					rows[i] = newRow(stream, int64(k%100*batch+i), k*batch+i)
				}
				if err := base.Insert(ctx, rows); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				total.Add(int64(batch))
			}
		}(w)
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(total.Load()) / time.Since(start).Seconds(), nil
}

// replay tops the store and the raw table up to n events, then times a full
// ordered read of n events through ReadAll and through the raw scan.
func replay(ctx context.Context, store eventstore.Store, base Baseline, n int, progress func(string, ...any)) (cairn, raw float64, err error) {
	const page = 5000
	const loadBatch = 1000
	have := 0
	var after uint64
	for {
		evs, err := store.ReadAll(ctx, after, page)
		if err != nil {
			return 0, 0, err
		}
		have += len(evs)
		if len(evs) < page {
			break
		}
		after = evs[len(evs)-1].Position
	}
	evs := make([]eventstore.EventData, loadBatch)
	for k := 0; have < n; k++ {
		for i := range evs {
			evs[i] = newEvent(i)
		}
		if _, err := store.Append(ctx, fmt.Sprintf("replay-%d", k), eventstore.NoStream, evs...); err != nil {
			return 0, 0, err
		}
		have += loadBatch
		if k%100 == 0 {
			progress("loaded %d/%d events", have, n)
		}
	}
	if err := base.Reset(ctx); err != nil {
		return 0, 0, err
	}
	rows := make([]Row, loadBatch)
	for k := 0; k*loadBatch < n; k++ {
		for i := range rows {
			rows[i] = newRow(fmt.Sprintf("replay-%d", k), int64(i), i)
		}
		if err := base.Insert(ctx, rows); err != nil {
			return 0, 0, err
		}
	}

	if st, ok := base.(Settler); ok {
		progress("settling tables before the replay")
		if err := st.Settle(ctx); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	read := 0
	after = 0
	for read < n {
		evs, err := store.ReadAll(ctx, after, page)
		if err != nil {
			return 0, 0, err
		}
		if len(evs) == 0 {
			break
		}
		read += len(evs)
		after = evs[len(evs)-1].Position
	}
	cairn = float64(read) / time.Since(start).Seconds()

	start = time.Now()
	rawRead, err := base.Scan(ctx, page)
	if err != nil {
		return 0, 0, err
	}
	raw = float64(rawRead) / time.Since(start).Seconds()
	return cairn, raw, nil
}

// subscriptionLag appends at rate per second for d while a subscription
// follows, and returns the p50 and p99 of append-start → delivered, and of
// the append calls themselves.
func subscriptionLag(ctx context.Context, store eventstore.Store, rate int, d time.Duration) (lag, commit [2]time.Duration, err error) {
	head, err := store.Append(ctx, "lag-probe", eventstore.Any, newEvent(0))
	if err != nil {
		return lag, commit, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub, err := store.Subscribe(sctx, head.Position)
	if err != nil {
		return lag, commit, err
	}
	defer sub.Close()

	n := int(float64(rate) * d.Seconds())
	lags := make([]time.Duration, 0, n)
	var delivered atomic.Int64
	done := make(chan error, 1)
	go func() {
		for msg := range sub.Messages() {
			if msg.CaughtUp {
				continue
			}
			var body struct {
				SentNanos int64 `json:"sent_ns"`
			}
			if err := json.Unmarshal(msg.Event.Data, &body); err != nil {
				done <- err
				return
			}
			lags = append(lags, time.Since(time.Unix(0, body.SentNanos)))
			delivered.Add(1)
			if len(lags) == n {
				done <- nil
				return
			}
		}
		done <- errors.Join(errors.New("subscription ended early"), sub.Err())
	}()

	commits := make([]time.Duration, 0, n)
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for i := 0; i < n; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		sent := time.Now()
		data, _ := json.Marshal(map[string]int64{"sent_ns": sent.UnixNano()})
		ev := eventstore.EventData{ID: eventstore.NewEventID(), Type: "bench.lag", Version: 1, Data: data}
		if _, err := store.Append(ctx, fmt.Sprintf("lag-%d", i/100), eventstore.Any, ev); err != nil {
			return lag, commit, err
		}
		commits = append(commits, time.Since(sent))
	}
	select {
	case err := <-done:
		if err != nil {
			return lag, commit, err
		}
	case <-time.After(30 * time.Second):
		return lag, commit, fmt.Errorf("subscription delivered %d of %d events within 30s", delivered.Load(), n)
	}
	sortDurations(lags)
	sortDurations(commits)
	return [2]time.Duration{percentile(lags, 0.50), percentile(lags, 0.99)},
		[2]time.Duration{percentile(commits, 0.50), percentile(commits, 0.99)}, nil
}
