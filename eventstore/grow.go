package eventstore

import "slices"

// Sizing of a read's result, see GrowEvents.
const (
	smallRead   = 16
	maxPresized = 1 << 16
)

// GrowEvents makes room in events for more rows of a read of up to limit
// events (limit <= 0: no limit); backends call it when the result is full.
// Nothing is allocated before the first row (an idle subscription's poll
// reads nothing); the first rows go into a small slice (a live
// subscription reads a few events per poll); a read that goes beyond it is
// a bulk read, so it gets room for its whole limit at once rather than the
// dozen copies of append's growth (large slices grow by a quarter).
// Without a limit, capacity doubles.
func GrowEvents(events []RecordedEvent, limit int) []RecordedEvent {
	var more int
	switch {
	case cap(events) == 0:
		more = smallRead
	case limit > 0 && limit <= maxPresized:
		more = limit - len(events)
	default:
		more = cap(events)
	}
	if limit > 0 {
		more = min(more, limit-len(events))
	}
	return slices.Grow(events, max(more, 1))
}
