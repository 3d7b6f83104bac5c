package domain

import (
	"fmt"
	"sort"
)

// Event is the payload of one domain event. Its wire name comes from
// EventType, a constant per payload type, never from the Go type's name.
// Payloads are JSON-tagged structs; their fields are append-only.
type Event interface {
	EventType() string
}

// SchemaVersion is the schema version every event type is written with
// today. A type whose payload changes incompatibly gets version 2 and an
// upcaster from 1 in its registry entry; stored events are never rewritten.
const SchemaVersion = 1

// RecordedEvent is an event read back from its stream: the decoded payload
// and the revision it has in that stream. Rehydrate functions fold these.
type RecordedEvent struct {
	Revision int64
	Event    Event
}

// eventDecoder turns stored JSON into a payload.
type eventDecoder func(data []byte) (Event, error)

// eventEntry registers one payload type under its wire name.
type eventEntry struct {
	name   string
	decode eventDecoder
}

// entry builds the registry entry of payload type E. The name comes from
// E's EventType method on its zero value (a constant), not from reflection.
func entry[E Event]() eventEntry {
	var zero E
	return eventEntry{
		name: zero.EventType(),
		decode: func(data []byte) (Event, error) {
			var e E
			if err := unmarshalEvent(data, &e); err != nil {
				return nil, err
			}
			return e, nil
		},
	}
}

// registry maps every wire name to its decoder. Adding an event type means
// adding it here; TestEventRegistry round-trips every entry.
var registry = buildRegistry(
	// Session stream.
	entry[SessionRequested](),
	entry[SessionPendingUpdated](),
	entry[SessionScheduled](),
	entry[SessionStatusChanged](),
	entry[SessionTerminating](),
	entry[SessionTerminated](),
	entry[SessionCancelled](),
	entry[SessionErrored](),
	entry[SessionDisconnected](),
	entry[SessionReconnected](),
	// Kernels, recorded in their session's stream.
	entry[KernelPreparing](),
	entry[KernelPulling](),
	entry[KernelPrepared](),
	entry[KernelCreating](),
	entry[KernelRunning](),
	entry[KernelExited](),
	entry[KernelTerminated](),
	entry[KernelErrored](),
	entry[KernelPullProgressed](),
	entry[KernelAppsReady](),
	// Agent stream.
	entry[AgentRegistered](),
	entry[AgentAllocated](),
	entry[AgentReleased](),
	entry[AgentLost](),
	entry[AgentRejoined](),
	entry[AgentDisconnected](),
	entry[AgentReconnected](),
	// Virtual folder stream.
	entry[VFolderCreated](),
	entry[VFolderRenamed](),
	entry[VFolderInvited](),
	entry[VFolderInvitationAccepted](),
	entry[VFolderInvitationRejected](),
	entry[VFolderInvitationCancelled](),
	entry[VFolderLeft](),
	entry[VFolderShared](),
	entry[VFolderUnshared](),
	entry[VFolderCloneFinished](),
	entry[VFolderTrashed](),
	entry[VFolderRestored](),
	entry[VFolderDeleteStarted](),
	entry[VFolderDeleteFinished](),
	entry[VFolderPurged](),
	entry[VFolderCreationAbandoned](),
	// Virtual folder owner index stream.
	entry[VFolderNameClaimed](),
	entry[VFolderNameReleased](),
	// Audit trail.
	entry[AccessLogged](),
	entry[AccessBatchLogged](),
	entry[AuditSealed](),
	entry[AuditPruned](),
	// Tenancy: domains, projects, users, e-mail reservations, keypairs.
	entry[DomainCreated](),
	entry[DomainModified](),
	entry[DomainActivated](),
	entry[DomainDeactivated](),
	entry[ProjectCreated](),
	entry[ProjectModified](),
	entry[ProjectActivated](),
	entry[ProjectDeactivated](),
	entry[ProjectMemberAdded](),
	entry[ProjectMemberRemoved](),
	entry[UserCreated](),
	entry[UserModified](),
	entry[UserPasswordChanged](),
	entry[UserMainKeypairSet](),
	entry[UserCreationAbandoned](),
	entry[UserEmailReserved](),
	entry[KeypairIssued](),
	entry[KeypairModified](),
	entry[KeypairActivated](),
	entry[KeypairDeactivated](),
	entry[KeypairSecretRotated](),
	// Resource policies.
	entry[KeypairPolicyCreated](),
	entry[KeypairPolicyModified](),
	entry[UserPolicyCreated](),
	entry[UserPolicyModified](),
	entry[ProjectPolicyCreated](),
	entry[ProjectPolicyModified](),
	// Resource groups and images.
	entry[ResourceGroupCreated](),
	entry[ResourceGroupModified](),
	entry[ResourceGroupAccessGranted](),
	entry[ResourceGroupAccessRevoked](),
	entry[ImageRegistered](),
	entry[ImageModified](),
	entry[ImageForgotten](),
	// API tokens.
	entry[TokenIssued](),
	entry[TokenRevoked](),
	// Agent enrollment (bus credentials).
	entry[AgentEnrollmentOffered](),
	entry[AgentEnrolled](),
	entry[AgentEnrollmentRevoked](),
	// Run-time settings.
	entry[SettingChanged](),
)

func buildRegistry(entries ...eventEntry) map[string]eventDecoder {
	m := make(map[string]eventDecoder, len(entries))
	for _, e := range entries {
		if _, dup := m[e.name]; dup || e.name == "" {
			// A static programming error, caught by every test of the package.
			panic(fmt.Sprintf("domain: event type %q registered twice or empty", e.name))
		}
		m[e.name] = e.decode
	}
	return m
}

// EventTypes returns every registered wire name, sorted.
func EventTypes() []string {
	out := make([]string, 0, len(registry))
	for name := range registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// DecodeEvent decodes a stored payload of the given type and schema
// version (0 is read as 1). An unknown type, a version newer than this code
// knows, or a payload that is not the type's JSON is a KindInternal error:
// the stream cannot be folded safely.
func DecodeEvent(eventType string, version int, data []byte) (Event, error) {
	const op = "event.decode"
	decode, ok := registry[eventType]
	if !ok {
		return nil, Errorf(op, KindInternal, "unknown event type %q", eventType)
	}
	if version > SchemaVersion || version < 0 {
		return nil, Errorf(op, KindInternal, "%s: schema version %d is not supported (this build reads up to %d)", eventType, version, SchemaVersion)
	}
	e, err := decode(data)
	if err != nil {
		return nil, &Error{Op: op, Kind: KindInternal, Message: eventType, Err: err}
	}
	return e, nil
}

// foldable verifies that a stream's events are dense and in order from
// revision 0, which every rehydrate function relies on, and returns the
// ones the aggregate folds: annotations (access records written with a
// command's events, IsAnnotation) are left out and the rest numbered
// densely from 0, so an aggregate's revision counts its own events.
// Appending to the stream needs the stream's revision (the last event's,
// annotations included), not the aggregate's.
func foldable(op string, events []RecordedEvent) ([]RecordedEvent, error) {
	annotated := false
	for i, re := range events {
		if re.Revision != int64(i) {
			return nil, Errorf(op, KindInternal, "event %d has revision %d: revisions must be dense from 0", i, re.Revision)
		}
		if re.Event == nil {
			return nil, Errorf(op, KindInternal, "event %d has no payload", i)
		}
		annotated = annotated || IsAnnotation(re.Event.EventType())
	}
	if !annotated {
		return events, nil
	}
	out := make([]RecordedEvent, 0, len(events))
	for _, re := range events {
		if !IsAnnotation(re.Event.EventType()) {
			out = append(out, RecordedEvent{Revision: int64(len(out)), Event: re.Event})
		}
	}
	return out, nil
}
