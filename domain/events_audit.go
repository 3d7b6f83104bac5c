package domain

import "github.com/cairnhq/cairn/domain/audit"

// Wire names of the audit trail's events.
const (
	// TypeAccessLogged is an access record as the API wrote it, not yet in
	// the chain: in the same append as a mutating request's events (in
	// that aggregate's stream), or batched into the access-log stream for
	// reads, failures and denials.
	TypeAccessLogged = "access.logged"
	// TypeAuditRecorded is an access record sealed into the hash chain by
	// the audit sequencer, in the audit stream.
	TypeAuditRecorded = audit.EventType
)

// Streams of the audit trail.
const (
	// AccessLogStream holds the access records written apart from any
	// command's events (reads, failed and denied requests).
	AccessLogStream = "access-log"
	// AuditStream is the hash chain: record n is revision n-1.
	AuditStream = "audit"
)

// AccessLogged is one request's access record before it is chained (Seq,
// PrevHash and Hash are zero). It is an annotation: aggregates never see
// it (the command repository leaves it out when it folds a stream).
type AccessLogged struct {
	audit.Record
}

// AuditRecorded is an access record sealed into the chain, with the
// position of the access.logged event it seals (not covered by the hash:
// it lets the sequencer resume, and an auditor find the source).
type AuditRecorded struct {
	audit.Record
	SourcePosition uint64 `json:"source_position"`
}

func (AccessLogged) EventType() string  { return TypeAccessLogged }
func (AuditRecorded) EventType() string { return TypeAuditRecorded }

// IsAnnotation reports whether events of this type annotate a stream
// without being part of its aggregate (access records).
func IsAnnotation(eventType string) bool { return eventType == TypeAccessLogged }
