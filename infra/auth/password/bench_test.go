package password

import "testing"

// BenchmarkVerifyDefault: one login's cost under DefaultParams.
func BenchmarkVerifyDefault(b *testing.B) {
	stored, err := New("correct horse battery staple", DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ok, err := Verify("correct horse battery staple", stored); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
