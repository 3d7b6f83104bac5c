package usage

import "time"

// DebugStatement is a query statement, for tests that look at plans.
type DebugStatement struct {
	SQL  string
	Args []any
}

// DebugQueries returns the statements Usage runs for q.
func DebugQueries(q Query) []DebugStatement {
	to, _ := time.Parse(DayLayout, q.To)
	c, s, o := statementsOf(q, to.AddDate(0, 0, 1))
	return []DebugStatement{{c.sql, c.args}, {s.sql, s.args}, {o.sql, o.args}}
}
