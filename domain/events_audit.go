package domain

import "github.com/cairnhq/cairn/domain/audit"

// TypeAuditRecorded is the wire name of an audit-trail event: one access
// record, whose payload is audit.Record itself (seq, prev_hash and hash
// included), so the chain verifies from the stored events alone.
const TypeAuditRecorded = audit.EventType
