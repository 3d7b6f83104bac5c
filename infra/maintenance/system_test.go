package maintenance_test

import (
	"testing"

	"github.com/cairnhq/cairn/infra/maintenance"
)

func TestRedactDSN(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"sqlite:///var/lib/cairn/cairn.db?synchronous=NORMAL", "sqlite:///var/lib/cairn/cairn.db?synchronous=NORMAL"},
		{"postgres://cairn:s3cret@db:5432/cairn?sslmode=disable", "postgres://db:5432/cairn?sslmode=disable"},
		{"postgres://cairn@db/cairn?password=s3cret&schema=cairn", "postgres://db/cairn?schema=cairn"},
		{"postgres://db/cairn?sslpassword=s3cret&PassWord=s3cret&sslkey=/k", "postgres://db/cairn"},
		{"nats://agent:s3cret@bus:4222", "nats://bus:4222"},
		{"host=db password=s3cret", "(hidden: not a URL)"},
	} {
		if got := maintenance.RedactDSN(c.in); got != c.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
