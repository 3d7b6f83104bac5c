package projections

import "strings"

// portableTypes turns the column-type placeholders of PortableDDL into
// each dialect's types.
var portableTypes = map[Dialect]*strings.Replacer{
	SQLite: strings.NewReplacer("%text%", "TEXT   ", "%int%", "INTEGER", "%bool%", "INTEGER",
		"%json%", "TEXT   ", "%time%", "INTEGER", "%strict%", " STRICT"),
	Postgres: strings.NewReplacer("%text%", "text", "%int%", "bigint", "%bool%", "boolean",
		"%json%", "jsonb", "%time%", "timestamptz", "%strict%", ""),
}

// PortableDDL writes a read model's migrations once for both dialects:
// columns typed %text%, %int%, %bool%, %json% or %time% (Dialect.Time's
// encoding), tables ending with %strict% (STRICT on SQLite), and indexes
// written "CREATE INDEX {schema}.name ON table (...)" as SQLite wants them
// (PostgreSQL gets the schema on the table instead).
func PortableDDL(ddl []string) map[Dialect][]string {
	out := map[Dialect][]string{}
	for d, r := range portableTypes {
		for _, stmt := range ddl {
			stmt = r.Replace(stmt)
			if d == Postgres && strings.HasPrefix(stmt, "CREATE INDEX") {
				// PostgreSQL puts an index in its table's schema.
				stmt = strings.Replace(stmt, "INDEX {schema}.", "INDEX ", 1)
				stmt = strings.Replace(stmt, " ON ", " ON {schema}.", 1)
			}
			out[d] = append(out[d], stmt)
		}
	}
	return out
}
