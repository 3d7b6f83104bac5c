// Package audit is the tamper-evident audit trail's model: the access
// Record of one API request and the hash chain that links records, so an
// auditor can verify offline that none was altered, removed or reordered.
// It is pure: no I/O, time and records come in as values.
//
// # The chain
//
// Records carry a dense sequence number from 1 and two hashes: PrevHash,
// the Hash of the record before (zero for the first), and Hash, the SHA-256
// of a canonical encoding of (PrevHash, Seq, every other field). Seal and
// Chain compute them on the writer's side; Verify and Verifier check a
// stream of records on the auditor's side and report the first bad record
// as a *ChainError whose Problem says what happened:
//
//   - altered: a field was changed (the record no longer matches its hash),
//     or a record was rewritten and re-hashed (the next record's PrevHash
//     no longer matches), or a record differs from an anchored head;
//   - removed: the sequence has a gap;
//   - reordered: a record comes before one with a lower seq;
//   - duplicated: a record is repeated;
//   - truncated: the trail ends before an anchored head.
//
// # What the chain cannot show alone
//
// Records removed from the end leave a shorter chain that is perfectly
// consistent, and someone able to rewrite the store can re-hash every
// record after the one they changed. Both are caught only against a head
// kept out of the writer's reach: Verifier.Finish and Chain.Head return
// the head (seq and hash of the last record); publish or store it apart
// (another system, a signed log, a printed report) and pass it to Verify
// as an anchor later. Verification then proves the trail up to that head
// is intact and complete.
//
// # Elided records
//
// An export for a reader who may not see every record (a domain auditor
// sees its domain's) shows each other record as an Elided one: its seq,
// prev_hash and hash, and "elided":true, nothing else. The export still
// verifies as a chain (Verifier.AddElided, ParseLine for an export's
// lines): an elided record must sit at its seq and link to the records
// around it, but its own hash cannot be recomputed, so a change to it
// shows as the next record's broken link (or, at the end, against an
// anchor).
//
// # Encoding and versions
//
// Record.Version names the encoding the Hash was computed with. Version 1
// (appendV1) is a fixed-order binary encoding: the tag "cairn.audit.v1\x00",
// PrevHash, then fixed-width big-endian numbers (seq, time as Unix seconds
// and nanoseconds, status, duration) and length-prefixed UTF-8 strings
// (outcome, action, entity type and id, user id, access key, acting-as,
// client IP, request id). Fixed widths and length prefixes make it
// unambiguous: no two different records encode alike. Adding a field to
// Record means a version 2 encoding that covers it; records already written
// keep verifying under version 1. Seal normalizes what a JSON round trip
// would change (time to UTC, invalid UTF-8 to U+FFFD), so a record read
// back from the store verifies.
//
// # Storage
//
// A sealed record is stored in the payload of an "audit.sealed" event of
// the audit stream (domain.AuditSealed), which holds a run of consecutive
// records, each the Record itself with Seq, PrevHash and Hash. A chain has
// one writer at a time: appending the next run with the expected revision
// of the stream's last event lets the event store refuse a second writer.
package audit
