package nvml

import "testing"

func TestMIGProfileName(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	tests := []struct {
		gpu              string
		giSlices, ciSize uint32
		memMiB, totalMiB uint64
		suffix           string
		want             string
	}{
		// Memory figures as real GPUs report them (nvidia-smi mig -lgip).
		{"A100-SXM4-40GB", 1, 1, 4864, 40536, "", "1g.5gb"},
		{"A100-SXM4-40GB", 2, 2, 9856, 40536, "", "2g.10gb"},
		{"A100-SXM4-40GB", 3, 3, 19968, 40536, "", "3g.20gb"},
		{"A100-SXM4-40GB", 7, 7, 40192, 40536, "", "7g.40gb"},
		{"A100-SXM4-40GB", 1, 1, 4864, 40536, "+me", "1g.5gb+me"},
		{"A100-SXM4-40GB", 2, 1, 9856, 40536, "", "1c.2g.10gb"},
		{"H100-SXM5-80GB", 1, 1, 9984, 81559, "", "1g.10gb"},
		{"H100-SXM5-80GB", 2, 2, 20224, 81559, "", "2g.20gb"},
		{"H100-SXM5-80GB", 7, 7, 81152, 81559, "", "7g.80gb"},
		{"H100-NVL-94GB", 1, 1, 11008, 95830, "", "1g.12gb"},
		{"H100-NVL-94GB", 3, 3, 47488, 95830, "", "3g.47gb"},
		{"H200-141GB", 1, 1, 16384, 143771, "", "1g.18gb"},
		{"H200-141GB", 2, 2, 33024, 143771, "", "2g.35gb"},
		{"H200-141GB", 3, 3, 71168, 143771, "", "3g.71gb"},
		{"B200-180GB", 1, 1, 22528, 183359, "", "1g.23gb"},
		{"B200-180GB", 1, 1, 45312, 183359, "", "1g.45gb"},
		// go-nvml's mock tables, whose sizes are the names' own figures.
		{"mock H100", 1, 1, 10240, 81920, "", "1g.10gb"},
		{"mock H200", 1, 1, 18432, 144384, "", "1g.18gb"},
		{"mock H200", 3, 3, 72704, 144384, "", "3g.71gb"},
		{"mock B200", 1, 1, 23552, 184320, "", "1g.23gb"},
		{"mock B200", 1, 1, 46080, 184320, "", "1g.45gb"},
		{"mock A100-80GB", 7, 7, 80384, 81920, "", "7g.80gb"},
		// Degenerate input still gives a name, not a panic.
		{"no memory reported", 1, 1, 4864, 0, "", "1g.0gb"},
		{"tiny instance", 1, 0, 1, 81920, "", "1g.10gb"},
	}
	for _, tt := range tests {
		got := migProfileName(tt.giSlices, tt.ciSize, tt.memMiB, tt.totalMiB*mib, tt.suffix)
		if got != tt.want {
			t.Errorf("%s %dg %d MiB: %q, want %q", tt.gpu, tt.giSlices, tt.memMiB, got, tt.want)
		}
	}
}
