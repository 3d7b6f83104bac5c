package reports

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// A stream written through the API also holds the requests' access
// records: decoded as the consumer decodes it, it still folds, and the
// aggregate counts its own events only.
func TestStreamWithAccessRecordsFolds(t *testing.T) {
	record := func(revision int64, ev domain.Event) eventstore.RecordedEvent {
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return eventstore.RecordedEvent{Revision: revision, Type: ev.EventType(), Version: domain.SchemaVersion, Data: data}
	}
	at := time.Unix(1, 0).UTC()
	recs := []eventstore.RecordedEvent{
		record(0, domain.AccessLogged{Record: audit.Record{Time: at, Action: "agent.register", Outcome: audit.Success}}),
		record(1, domain.AgentRegistered{AgentID: "a1", Architecture: "x86_64", Capacity: domain.Slots{domain.SlotCPU: domain.Units(1)}, At: at}),
	}
	events, err := commands.DecodeStream(recs)
	if err != nil {
		t.Fatal(err)
	}
	a, err := domain.RehydrateAgent(events)
	if err != nil || !a.Exists() || a.Revision() != 0 {
		t.Fatalf("agent %+v, %v: want it registered at its own revision 0", a, err)
	}
}
