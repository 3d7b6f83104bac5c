package signing

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func sigOf(i uint64) [sha256.Size]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], i)
	return sha256.Sum256(b[:])
}

// TestReplayCacheBoundNeverAcceptsAReplay: a small cache offered many
// signatures, a third of them replays of earlier ones, never holds more
// than its size and never accepts a signature twice. Requests arrive
// every 0-200ms dated within 2s of the clock, and 2% are delayed 5
// minutes: the full cache's window shrinks to about its size times the
// arrival interval (~6s), which refuses the delayed ones and accepts
// every prompt one.
func TestReplayCacheBoundNeverAcceptsAReplay(t *testing.T) {
	t.Parallel()
	const size, n = 64, 20_000
	window := 15 * time.Minute
	c, err := NewReplayCache(size)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := testNow
	dates := map[[sha256.Size]byte]time.Time{}
	delayed := map[[sha256.Size]byte]bool{}
	accepted := map[[sha256.Size]byte]bool{}
	var sigs [][sha256.Size]byte
	refusedDelayed := 0
	for i := range uint64(n) {
		now = now.Add(time.Duration(rng.IntN(200)) * time.Millisecond)
		var sig [sha256.Size]byte
		if len(sigs) > 0 && rng.IntN(3) == 0 {
			sig = sigs[rng.IntN(len(sigs))] // a replay of an earlier request
		} else {
			sig = sigOf(i)
			dates[sig] = now.Add(time.Duration(rng.IntN(4000)-2000) * time.Millisecond)
			if rng.IntN(50) == 0 {
				dates[sig], delayed[sig] = now.Add(-5*time.Minute), true
			}
			sigs = append(sigs, sig)
		}
		date := dates[sig]
		if d := date.Sub(now); d <= -window || d >= window {
			continue // the skew check refuses it before the cache is asked
		}
		err := c.Accept(sig, date, now.Add(-window))
		switch {
		case err == nil && accepted[sig]:
			t.Fatalf("signature %d accepted twice", i)
		case err == nil:
			accepted[sig] = true
		case !errors.Is(err, ErrReplayed) && !errors.Is(err, ErrReplayWindow):
			t.Fatalf("refused with %v", err)
		case accepted[sig]:
			// a replay refused
		case errors.Is(err, ErrReplayed):
			t.Fatalf("a fresh signature refused as replayed")
		case delayed[sig]:
			refusedDelayed++
		default:
			t.Fatalf("a prompt request refused: %v (floor %v, now %v)", err, c.Floor(), now)
		}
		if c.Len() > size {
			t.Fatalf("the cache holds %d > %d", c.Len(), size)
		}
	}
	if refusedDelayed == 0 {
		t.Fatal("the cache never filled up: no delayed request was refused")
	}
	t.Logf("%d accepted, %d delayed ones refused, floor %v behind the clock", len(accepted), refusedDelayed, now.Sub(c.Floor()))
}

// TestReplayCacheFloor: when full, the oldest signature goes and the floor
// rises to its date; a request older than everything held is accepted
// without evicting anything; expired signatures go without any refusal.
func TestReplayCacheFloor(t *testing.T) {
	t.Parallel()
	c, err := NewReplayCache(2)
	if err != nil {
		t.Fatal(err)
	}
	oldest := testNow.Add(-15 * time.Minute)
	at := func(s int) time.Time { return testNow.Add(time.Duration(s) * time.Second) }
	accept := func(i uint64, s int) error { return c.Accept(sigOf(i), at(s), oldest) }
	for i, s := range []int{-10, -5} {
		if err := accept(uint64(i), s); err != nil {
			t.Fatal(err)
		}
	}
	if !c.Floor().IsZero() {
		t.Fatalf("floor %v before the cache was ever full", c.Floor())
	}
	// Full: a newer one evicts the one at -10s.
	if err := accept(2, -1); err != nil {
		t.Fatal(err)
	}
	if !c.Floor().Equal(at(-10)) || c.Len() != 2 {
		t.Fatalf("floor %v, len %d", c.Floor(), c.Len())
	}
	// The evicted signature, replayed, is refused by the floor.
	if err := accept(0, -10); !errors.Is(err, ErrReplayWindow) {
		t.Fatalf("evicted replay: %v", err)
	}
	// A fresh one older than everything held (-7s < -5s) is accepted
	// without being held; the floor rises to it, refusing its replay.
	if err := accept(3, -7); err != nil {
		t.Fatal(err)
	}
	if !c.Floor().Equal(at(-7)) || c.Len() != 2 {
		t.Fatalf("floor %v, len %d", c.Floor(), c.Len())
	}
	if err := accept(3, -7); !errors.Is(err, ErrReplayWindow) {
		t.Fatalf("replay of an unheld one: %v", err)
	}
	// Held ones are refused as replayed.
	if err := accept(1, -5); !errors.Is(err, ErrReplayed) {
		t.Fatalf("held replay: %v", err)
	}
	// Time passes: both held signatures leave the window and are
	// forgotten, the floor rising to the last; nothing fresh is refused.
	oldest = at(0)
	if err := accept(4, 1); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 1 || !c.Floor().Equal(at(-1)) {
		t.Fatalf("after expiry: len %d, floor %v", c.Len(), c.Floor())
	}
	// A clock stepped back does not revive an expired signature.
	oldest = at(-600)
	if err := accept(2, -1); !errors.Is(err, ErrReplayWindow) {
		t.Fatalf("an expired signature with the clock set back: %v", err)
	}
}

// TestReplayCacheConcurrent: many goroutines offering the same signatures
// get each accepted exactly once (run with -race).
func TestReplayCacheConcurrent(t *testing.T) {
	t.Parallel()
	c, err := NewReplayCache(0)
	if err != nil {
		t.Fatal(err)
	}
	const sigs, workers = 500, 8
	var mu sync.Mutex
	wins := map[uint64]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range uint64(sigs) {
				if c.Accept(sigOf(i), testNow, testNow.Add(-time.Minute)) == nil {
					mu.Lock()
					wins[i]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for i := range uint64(sigs) {
		if wins[i] != 1 {
			t.Fatalf("signature %d accepted %d times", i, wins[i])
		}
	}
}

func TestNewReplayCacheRefusesNegativeSize(t *testing.T) {
	t.Parallel()
	if _, err := NewReplayCache(-1); err == nil {
		t.Fatal("a negative size was accepted")
	}
}

// BenchmarkReplayCacheFull: Accept on a full cache (one eviction each).
func BenchmarkReplayCacheFull(b *testing.B) {
	c, _ := NewReplayCache(DefaultReplayCacheSize)
	now := testNow
	i := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		i++
		if err := c.Accept(sigOf(i), now.Add(time.Duration(i)), now.Add(-time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
}
