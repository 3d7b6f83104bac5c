package usage

import "time"

// DayLayout is how a day is written: a UTC calendar date.
const DayLayout = time.DateOnly

// piece is the part of a span that falls on one UTC day.
type piece struct {
	day    string
	millis int64
}

// splitDays cuts the span [from, to) at UTC midnights into the
// milliseconds held on each day, in order. An empty or backward span has
// no pieces.
func splitDays(from, to time.Time) []piece {
	from, to = from.UTC().Truncate(time.Millisecond), to.UTC().Truncate(time.Millisecond)
	var out []piece
	for from.Before(to) {
		y, m, d := from.Date()
		next := time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
		end := next
		if to.Before(next) {
			end = to
		}
		out = append(out, piece{day: from.Format(DayLayout), millis: end.Sub(from).Milliseconds()})
		from = end
	}
	return out
}
