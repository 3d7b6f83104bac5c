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

// BenchmarkAppendJSON: records encoded per second, unsealed as the
// access-log writer packs them and sealed as the sequencer does.
func BenchmarkAppendJSON(b *testing.B) {
	r := sample(3)
	sealed, err := Seal(Genesis, r)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		append func([]byte, *Record) []byte
		r      Record
	}{{"unsealed", AppendUnsealedJSON, r}, {"sealed", AppendJSON, sealed}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 1024)
			for b.Loop() {
				buf = c.append(buf[:0], &c.r)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
