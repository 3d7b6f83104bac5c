package signing

import (
	"time"
)

// FormatDate renders t the way Backend.AI's Python client fills the Date
// header (datetime.now(tzutc()).isoformat()): UTC, ISO 8601, microseconds
// when there are any, "+00:00" as the zone. E.g. 2024-05-01T12:34:56.789012+00:00.
func FormatDate(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05-07:00")
	}
	return t.Format("2006-01-02T15:04:05.000000-07:00")
}

// httpLayouts are the RFC 1123 forms accepted besides ISO 8601: the zone
// must be spelled out as GMT, UTC or a numeric offset, never an abbreviation
// Go would have to guess the offset of.
var httpLayouts = []string{
	"Mon, 02 Jan 2006 15:04:05 GMT",
	"Mon, 02 Jan 2006 15:04:05 UTC",
	"Mon, 02 Jan 2006 15:04:05 -0700",
}

// ParseDate parses a Date / X-BackendAI-Date value. It accepts ISO 8601
// (what Backend.AI's clients send: Python's isoformat(), JavaScript's
// toISOString(), the documented 20160930T01:23:45Z) and RFC 1123 with GMT,
// UTC or a numeric zone. A date without a zone is UTC, as on Backend.AI.
// The returned time keeps the zone the client wrote: the signing key is
// derived from the calendar day in that zone.
func ParseDate(raw string) (time.Time, error) {
	if t, ok := parseISO8601(raw); ok {
		return t, nil
	}
	for _, layout := range httpLayouts {
		if t, err := time.Parse(layout, raw); err == nil {
			return t, nil
		}
	}
	return time.Time{}, refuse(ReasonInvalidDate, quote(raw)+" is neither ISO 8601 nor RFC 1123")
}

// signingDay is the yyyymmdd the signing key is derived from: the date's
// calendar day in the zone it was written in (Backend.AI formats the parsed,
// zone-aware datetime with strftime("%Y%m%d") without converting it).
func signingDay(t time.Time) string { return t.Format("20060102") }

// parseISO8601 reads date [T| ] time [fraction] [zone] where date is
// YYYY-MM-DD or YYYYMMDD, time HH:MM:SS or HHMMSS, the fraction 1 to 9
// digits after '.' or ',', and the zone Z, ±HH:MM, ±HHMM or ±HH.
func parseISO8601(s string) (time.Time, bool) {
	p := isoParser{s: s}
	year := p.digits(4)
	extended := p.accept('-')
	month := p.digits(2)
	if extended && !p.accept('-') {
		return time.Time{}, false
	}
	day := p.digits(2)
	if !p.accept('T') && !p.accept('t') && !p.accept(' ') {
		return time.Time{}, false
	}
	hour := p.digits(2)
	extended = p.accept(':')
	minute := p.digits(2)
	if extended && !p.accept(':') {
		return time.Time{}, false
	}
	sec := p.digits(2)
	nsec := 0
	if p.accept('.') || p.accept(',') {
		n := 0
		for scale := 100_000_000; p.more() && isDigit(p.peek()); scale /= 10 {
			if n++; n > 9 {
				return time.Time{}, false
			}
			nsec += int(p.next()-'0') * scale
		}
		if n == 0 {
			return time.Time{}, false
		}
	}
	loc := time.UTC
	if p.more() {
		switch c := p.next(); c {
		case 'Z', 'z':
		case '+', '-':
			oh := p.digits(2)
			om := 0
			if p.more() {
				p.accept(':')
				om = p.digits(2)
			}
			if oh > 23 || om > 59 {
				return time.Time{}, false
			}
			offset := oh*3600 + om*60
			if c == '-' {
				offset = -offset
			}
			loc = time.FixedZone("", offset)
		default:
			return time.Time{}, false
		}
	}
	if p.bad || p.more() {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)
	// time.Date normalises out-of-range fields (Feb 30 → Mar 1): refuse them.
	if t.Year() != year || int(t.Month()) != month || t.Day() != day ||
		t.Hour() != hour || t.Minute() != minute || t.Second() != sec {
		return time.Time{}, false
	}
	return t, true
}

type isoParser struct {
	s   string
	i   int
	bad bool
}

func (p *isoParser) more() bool { return p.i < len(p.s) }
func (p *isoParser) peek() byte { return p.s[p.i] }
func (p *isoParser) next() byte { c := p.s[p.i]; p.i++; return c }

func (p *isoParser) accept(c byte) bool {
	if p.more() && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// digits reads exactly n decimal digits; a shortfall marks the parse bad.
func (p *isoParser) digits(n int) int {
	v := 0
	for range n {
		if !p.more() || !isDigit(p.peek()) {
			p.bad = true
			return 0
		}
		v = v*10 + int(p.next()-'0')
	}
	return v
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
