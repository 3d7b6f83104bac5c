package tenancy_test

import (
	"testing"

	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// BenchmarkCredentials measures the signature verifier's lookup of an
// access key (secret, keypair and owner status) on SQLite: the query every
// signed request makes.
func BenchmarkCredentials(b *testing.B) {
	be := projectiontest.SQLite(b)
	rm := tenancy.New(be.DB)
	if err := projections.Setup(ctx, be.DB, rm); err != nil {
		b.Fatal(err)
	}
	r := projectiontest.Start(b, be.DB, be, rm, projections.Options{})
	w := build(b, handlers(b, be), nil)
	r.WaitFor(b, w.last)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := rm.Credentials(ctx, w.aliceKey.AccessKey); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
