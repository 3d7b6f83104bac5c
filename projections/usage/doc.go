// Package usage is the read model of resource usage over time: per UTC
// day and per user, project or domain, how many sessions started and how
// much of each slot their kernels held (cpu core-hours, memory GiB-hours,
// whole GPU device-hours, fractional GPU share-hours, and any other slot
// an agent allocates), with the kernel-seconds they held it. It keeps
// everything from the log: there is no retention window, and a rebuild
// from position 0 writes exactly the rows the live projector wrote.
//
// # What counts
//
// Usage counts from a kernel's allocation (agent.allocated) to its
// release (agent.released): the time its slots were reserved on an agent
// and closed to every other session, the same span the quotas count. So
// image pulls and container creation count (the devices are held), and a
// session that errored counts until its allocation is given back. A
// session counts as started on the UTC day it was scheduled
// (session.scheduled), once.
//
// # Days
//
// A kernel's span is split at UTC midnights when it is released (fold
// time): usage_days holds one row per kernel and day with the
// milliseconds it held its allocation that day, and usage_kernel_slots
// the allocation's amounts, once per kernel. The allocation times of a
// batch's released kernels are read in one statement when the batch ends
// (released.go), not one per event. A kernel still allocated has
// no day rows yet: the query splits its span up to the "now" it is
// given, so nothing guessed is ever stored. Sums are computed by the
// query (one statement per kind of row), in floating point: an amount of
// bytes times milliseconds does not fit an integer.
//
// # Names
//
// Users are named by the read model itself (user.created and
// user.modified give the e-mail address and username), so a usage query
// reads no other read model's tables. Domains and projects are named by
// their names, which are their keys.
package usage
