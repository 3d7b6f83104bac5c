package commands

import (
	"fmt"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// A deposed leader's fenced append is unavailable (another replica leads)
// and certainly not written.
func TestFencedAppendError(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("append: %w", &eventstore.FencedError{Fence: eventstore.Fence{Lease: "scheduler", Epoch: 1}, Current: 2})
	if k := domain.KindOf(storeError("commands.append", err)); k != domain.KindUnavailable {
		t.Errorf("kind %v, want unavailable", k)
	}
	if !definitelyNotWritten(err) {
		t.Error("a fenced append counted as maybe written")
	}
}
