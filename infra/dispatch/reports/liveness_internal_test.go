package reports

import (
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
)

// The fold of the log runs behind the commands the consumer sends itself:
// a status from an older position must not undo a newer one.
func TestLivenessKeepsTheNewestStatus(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := newLiveness(func() time.Time { return now })
	l.setStatus("a1", domain.AgentStatusDisconnected, 10) // the checker's disconnect
	l.setStatus("a1", domain.AgentStatusAlive, 20)        // a heartbeat's reconnect
	l.setStatus("a1", domain.AgentStatusDisconnected, 10) // the fold reaching the disconnect
	if got := l.statusOf("a1"); got != domain.AgentStatusAlive {
		t.Fatalf("status %s after an older disconnect was folded, want alive", got)
	}
	l.setStatus("a1", domain.AgentStatusAlive, 20) // the fold reaching the reconnect
	l.setStatus("a1", domain.AgentStatusDisconnected, 30)
	if got := l.statusOf("a1"); got != domain.AgentStatusDisconnected {
		t.Fatalf("status %s after a newer disconnect, want disconnected", got)
	}
}
