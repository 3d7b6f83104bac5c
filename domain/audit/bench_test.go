package audit

import (
	"slices"
	"testing"
)

// BenchmarkSeal: records hashed and chained per second by the writer
// (records/s = 1e9 / ns/op).
func BenchmarkSeal(b *testing.B) {
	r := sample(0)
	head := Genesis
	b.ReportAllocs()
	for b.Loop() {
		sealed, err := Seal(head, r)
		if err != nil {
			b.Fatal(err)
		}
		head = sealed.Head()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkVerify: records checked per second by an auditor.
func BenchmarkVerify(b *testing.B) {
	records := chain(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(slices.Values(records)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(records))/b.Elapsed().Seconds(), "records/s")
}
