// Package managertest is the test harness of the manager's process
// managers (scheduler, forwarder, reports): real parts only — a SQLite
// event store in a temporary directory with the command handlers over it,
// a settable clock they share, an embedded NATS JetStream server with a
// bus connected to it — and waits on conditions that are woken by the
// store's subscription rather than by sleeping.
package managertest
