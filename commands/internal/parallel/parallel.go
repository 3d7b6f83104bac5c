// Package parallel runs the independent writes of a batch (a scheduling
// round's appends) on a bounded number of goroutines.
package parallel

import (
	"context"
	"sync"
	"sync/atomic"
)

// Each runs do(0..n-1) on up to workers goroutines and returns when all
// calls have; it stops handing out work when ctx ends.
func Each(ctx context.Context, workers, n int, do func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(workers, 1), n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				do(i)
			}
		})
	}
	wg.Wait()
}
