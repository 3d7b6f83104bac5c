package parallel

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestEachRunsEveryIndexOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 100} {
		seen := make([]atomic.Int32, 50)
		Each(context.Background(), workers, len(seen), func(i int) { seen[i].Add(1) })
		for i := range seen {
			if n := seen[i].Load(); n != 1 {
				t.Fatalf("workers %d: index %d ran %d times", workers, i, n)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := 0
	Each(ctx, 1, 10, func(int) { ran++ })
	if ran != 0 {
		t.Fatalf("%d calls after the context ended", ran)
	}
}
