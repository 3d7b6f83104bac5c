// Package quotas folds the global log into the quota model
// (domain/quota) for the process managers that read the log themselves:
// the scheduler, which checks quotas authoritatively over what it folded,
// and the session limits manager. It knows the stream names of the
// commands package, and routes each event that carries a limit or changes
// occupancy to the fold of its aggregate with the stream's key.
package quotas

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

// route is where an event type goes, and the prefix of its stream.
type route struct {
	prefix string
	apply  func(b *Book, key string, ev domain.Event) error
}

func sessionRoute(b *Book, key string, ev domain.Event) error {
	if id, err := uuid.Parse(key); err == nil {
		b.Ledger.ApplySession(id, ev)
	} // else not a session stream the commands write (as the scheduler, skip it)
	return nil
}

func agentRoute(b *Book, _ string, ev domain.Event) error {
	b.Ledger.ApplyAgent(ev)
	return nil
}

func domainRoute(b *Book, key string, ev domain.Event) error {
	b.Limits.ApplyDomain(key, ev)
	return nil
}

func projectRoute(b *Book, key string, ev domain.Event) error {
	b.Limits.ApplyProject(key, ev)
	return nil
}

func userRoute(b *Book, key string, ev domain.Event) error {
	b.Limits.ApplyUser(key, ev)
	return nil
}

func keypairRoute(b *Book, key string, ev domain.Event) error {
	b.Limits.ApplyKeypair(key, ev)
	return nil
}

func keypairPolicyRoute(b *Book, key string, ev domain.Event) error {
	b.Limits.ApplyKeypairPolicy(key, ev)
	return nil
}

// routes lists every event type the book folds (the stream prefixes are
// those of commands.SessionStream, AgentStream, DomainStream,
// ProjectStream, UserStream, KeypairStream and KeypairPolicyStream).
var routes = map[string]route{
	domain.TypeSessionRequested:  {"session-", sessionRoute},
	domain.TypeSessionScheduled:  {"session-", sessionRoute},
	domain.TypeSessionTerminated: {"session-", sessionRoute},
	domain.TypeSessionCancelled:  {"session-", sessionRoute},
	domain.TypeSessionErrored:    {"session-", sessionRoute},
	domain.TypeAgentAllocated:    {"agent-", agentRoute},
	domain.TypeAgentReleased:     {"agent-", agentRoute},

	domain.TypeDomainCreated:         {"domain-", domainRoute},
	domain.TypeDomainModified:        {"domain-", domainRoute},
	domain.TypeProjectCreated:        {"project-", projectRoute},
	domain.TypeProjectModified:       {"project-", projectRoute},
	domain.TypeUserMainKeypairSet:    {"user-", userRoute},
	domain.TypeKeypairIssued:         {"keypair-", keypairRoute},
	domain.TypeKeypairModified:       {"keypair-", keypairRoute},
	domain.TypeKeypairPolicyCreated:  {"keypair-policy-", keypairPolicyRoute},
	domain.TypeKeypairPolicyModified: {"keypair-policy-", keypairPolicyRoute},
}

// EventTypes lists the wire names of the events a Book folds, sorted.
func EventTypes() []string {
	out := make([]string, 0, len(routes))
	for t := range routes {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Wants reports whether a Book folds events of this type: callers decode
// only those.
func Wants(eventType string) bool {
	_, ok := routes[eventType]
	return ok
}

// Book is the quota model folded from the log: the limits and the
// occupancy ledger. Apply every event in log order.
type Book struct {
	Limits *quota.Limits
	Ledger *quota.Ledger
}

// NewBook returns an empty book.
func NewBook() *Book { return &Book{Limits: quota.NewLimits(), Ledger: quota.NewLedger()} }

// Apply folds one decoded event of stream. Events of other types are
// ignored; an event of a folded type in a stream that is not its kind's
// is an error (the log is not what the commands write).
func (b *Book) Apply(stream string, ev domain.Event) error {
	r, ok := routes[ev.EventType()]
	if !ok {
		return nil
	}
	key, ok := strings.CutPrefix(stream, r.prefix)
	if !ok || key == "" {
		return fmt.Errorf("quotas: %s in stream %q, not a %s<key> stream", ev.EventType(), stream, r.prefix)
	}
	if err := r.apply(b, key, ev); err != nil {
		return fmt.Errorf("quotas: %s: %w", ev.EventType(), err)
	}
	return nil
}

// ApplyRecorded decodes and folds an event of the log when its type is
// one the book folds.
func (b *Book) ApplyRecorded(rec eventstore.RecordedEvent) error {
	if !Wants(rec.Type) {
		return nil
	}
	ev, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
	if err != nil {
		return fmt.Errorf("quotas: %s@%d: %w", rec.Stream, rec.Revision, err)
	}
	return b.Apply(rec.Stream, ev)
}

// View is the quota view placement checks the given sessions (the pending
// sessions of a round) against, over the occupancy folded so far (see
// quota.View).
func (b *Book) View(sessions []quota.Session) placement.Quotas {
	return quota.View(b.Limits, quota.Holdings{Ledger: b.Ledger}, sessions)
}
