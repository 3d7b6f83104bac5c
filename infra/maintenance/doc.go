// Package maintenance is what a superadmin runs on a live server: it
// rebuilds one read model online, verifies the audit trail's hash chain,
// and describes the running system (version, store, bus, leases, read
// models' positions). The HTTP routes over it are readapi's (GET) and
// infra/commandapi's (POST).
//
// # Online rebuild
//
// A rebuild replays the log into a shadow copy of the read model (a file
// beside an SQLite store, a schema of its own in PostgreSQL:
// readmodels.OpenShadow) while the live read model keeps answering and its
// projector keeps following the log. Once the copy has reached the head it
// started from, the live projector is held (Runner.Hold), the copy catches
// up with the position the live one had reached, and projections.Replace
// swaps the rows in one transaction; the live projector then resumes from
// the copy's position. Readers therefore see the old rows or the new ones,
// never a read model being filled, and a wait_for_position never passes on
// rows older than the position it waited for. While the live projector is
// held (the catch-up and the copy) a wait_for_position beyond its position
// answers 503 with Retry-After, as when a projector stops.
//
// Rebuilding in place behind a 503 would have been simpler, but every
// request authenticates against the tenancy read model and the commands
// consult the occupancy and vfolders ones: rebuilding those in place would
// take the whole API down, or let commands decide on a half-built model.
//
// Jobs live in memory: a restart forgets them (an unfinished rebuild leaves
// only its shadow, which the next rebuild of that read model drops). A
// rebuild changes no domain state, so it appends no event; the access log
// records who asked for it.
package maintenance
