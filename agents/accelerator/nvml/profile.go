package nvml

import "fmt"

// migProfileName names a MIG profile the way nvidia-smi does:
// "<g>g.<mem>gb" when the compute instance spans the whole GPU instance,
// "<c>c.<g>g.<mem>gb" when it takes part of it, then the profile's suffix
// ("+me" for media extensions, ...).
//
// The memory figure is not the instance's memory rounded: the driver names
// profiles by the eighth of the GPU they take (a 1-slice instance of a
// 180 GB B200 has 22 GiB and is "1g.23gb"). So: the instance's memory as a
// fraction of the GPU's, to the nearest eighth (at least one), times the
// GPU's memory in whole GiB (rounded up), rounded. NVIDIA's go-nvlib rounds
// the eighth up instead; nearest gives the same names on real A100, H100,
// H200 and B200 figures, and also fits go-nvml's mock profile tables, whose
// memory sizes are the rounded names themselves.
func migProfileName(giSlices, ciSlices uint32, memoryMiB, gpuMemoryBytes uint64, suffix string) string {
	const mib, gib = 1 << 20, 1 << 30
	var gb uint64
	if gpuMemoryBytes > 0 {
		eighths := (memoryMiB*mib*16 + gpuMemoryBytes) / (2 * gpuMemoryBytes)
		eighths = max(eighths, 1)
		gpuGiB := (gpuMemoryBytes + gib - 1) / gib
		gb = (eighths*gpuGiB*2 + 8) / 16
	}
	if ciSlices == 0 || ciSlices == giSlices {
		return fmt.Sprintf("%dg.%dgb%s", giSlices, gb, suffix)
	}
	return fmt.Sprintf("%dc.%dg.%dgb%s", ciSlices, giSlices, gb, suffix)
}
