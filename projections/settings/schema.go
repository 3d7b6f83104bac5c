package settings

import "github.com/cairnhq/cairn/projections"

// tables, in creation order.
var tables = []string{"setting_changes"}

// ddl is written once with the column type markers each dialect replaces
// (see projections.PortableDDL). Append-only.
var ddl = []string{
	`CREATE TABLE {schema}.setting_changes (
    position  %int%  PRIMARY KEY,
    setting   %text% NOT NULL,
    old_value %text% NOT NULL,
    new_value %text% NOT NULL,
    actor     %text% NOT NULL,
    changed_at %time% NOT NULL
)%strict%`,
	`CREATE INDEX {schema}.setting_changes_key ON setting_changes (setting, position)`,
}

// migrations are the DDL per dialect.
var migrations = projections.PortableDDL(ddl)
