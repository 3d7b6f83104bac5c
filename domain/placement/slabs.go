package placement

import (
	"slices"
	"strconv"
)

// slabs hands out the small slices of many requests from a few large
// arrays: one round compiles thousands of sessions.
type slabs struct {
	amt   []slotAmt
	kern  []kernelReq
	vec   []int64
	seq   []int32 // 0, 1, 2, ... shared by every demand of one kernel
	kinds map[int32]string
}

func (sl *slabs) amounts(n int) []slotAmt {
	if len(sl.amt)+n > cap(sl.amt) {
		sl.amt = make([]slotAmt, 0, max(4096, n))
	}
	out := sl.amt[len(sl.amt) : len(sl.amt) : len(sl.amt)+n]
	sl.amt = sl.amt[:len(sl.amt)+n]
	return out
}

func (sl *slabs) kernels(n int) []kernelReq {
	if len(sl.kern)+n > cap(sl.kern) {
		sl.kern = make([]kernelReq, 0, max(1024, n))
	}
	out := sl.kern[len(sl.kern) : len(sl.kern)+n : len(sl.kern)+n]
	sl.kern = sl.kern[:len(sl.kern)+n]
	return out
}

// indexes returns 0..n-1 (shared: callers must not write to it).
func (sl *slabs) indexes(n int) []int32 {
	for len(sl.seq) < n {
		sl.seq = append(sl.seq, int32(len(sl.seq)))
	}
	return sl.seq[:n:n]
}

// index returns {i} (shared).
func (sl *slabs) index(i int32) []int32 { return sl.indexes(int(i) + 1)[i : i+1 : i+1] }

// total returns a zeroed scratch vector of n slots.
func (sl *slabs) total(n int) []int64 {
	if len(sl.vec) < n {
		sl.vec = make([]int64, n)
	}
	clear(sl.vec[:n])
	return sl.vec[:n]
}

// kindsKey names a sorted set of device kinds, for maps.
func (sl *slabs) kindsKey(kinds []int32) string {
	slices.Sort(kinds)
	switch len(kinds) {
	case 0:
		return ""
	case 1:
		if k, ok := sl.kinds[kinds[0]]; ok {
			return k
		}
	}
	var b []byte
	for _, k := range kinds {
		b = strconv.AppendInt(b, int64(k), 10)
		b = append(b, ',')
	}
	key := string(b)
	if len(kinds) == 1 {
		sl.kinds[kinds[0]] = key
	}
	return key
}
