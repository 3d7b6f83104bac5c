package placement

import "time"

// state is one round's working copy of the input, compiled into dense
// arrays: agents sorted by id with free amounts per slot, devices, pools
// of interchangeable agents, groups with their queues, and the quota
// view. Placing a kernel subtracts from it, so every later decision of the
// round sees the earlier ones.
type state struct {
	now       time.Time
	slots     slotTable
	agents    []agent
	devs      []device
	pools     []pool
	groups    []group
	ungrouped bool
	reqs      []request
	quota     quotaState
	cands     map[candKey]*candidates

	// trial is set while a multi-node session tries its kernels one by
	// one; journal then records what to give back if one fails.
	trial   bool
	journal []undo

	scratch scratch
	out     Result
	// exhaustive makes the selectors scan every fitting agent instead of
	// reading rankings (tests check that both agree).
	exhaustive bool
}

// agent is one Agent: capacity and free amounts (views into a slab), its
// devices devs[devLo:devHi] sorted by kind then id, and per device kind
// the range of its devices.
type agent struct {
	id       string
	arch     string
	group    int32 // -1: in no known group
	pool     int32 // -1: not schedulable
	member   int32 // index in its group's members (round-robin)
	capacity []int64
	free     []int64
	devLo    int32
	kinds    []kindRange
	leaf     int32 // index in its pool's agents
}

// kindRange is an agent's devices of one kind: devs[lo:hi].
type kindRange struct {
	kind   int32
	lo, hi int32
	// whole counts the devices with nothing allocated.
	whole int32
	// maxCap is the largest share capacity among them, maxFree the
	// largest free share, sumFree the free shares of them all.
	maxCap, maxFree, sumFree int64
}

// device is one accelerator and its free share.
type device struct {
	id        string
	kind      int32
	cap, free int64
}

// pool is a set of agents of one group and architecture with the same
// kinds of accelerators: a selector looks only at the pools that can serve
// a request, and its tree skips the agents that cannot.
type pool struct {
	group  int32
	arch   string
	kinds  []int32 // sorted device kinds (and accelerator slots of the capacity)
	agents []int32 // by id
	// capacity is what the agents have (the capacity part of aggregates).
	capacity aggregates
	tree     maxTree
	rankings []*ranking
}

// group is a resource group (or the one implicit group) during the round.
type group struct {
	cfg ResourceGroup
	// members are the group's agents by id, schedulable or not: the index
	// space of the round-robin cursor.
	members []int32
	pools   []int32
	// capTotal is the schedulable agents' capacity per slot (for drf).
	capTotal []int64
	rr       int
	// blocker is the session blocking the fifo queue, if any.
	blocker *request
	queue   []*request
}

// undo is one change a trial made: a slot of an agent, or a device.
type undo struct {
	agent  int32
	slot   int32 // -1: a device
	device int32
	amt    int64
}

// scratch holds buffers reused across decisions (no allocation per try).
type scratch struct {
	free  []int64 // an agent's device free shares while assigning
	used  []bool
	parts []part
	stack []int32
	cols  []int32
	one   []bool
	agg   aggregates
}

// part is a share of one device given to one kernel of a demand.
type part struct {
	kernel int32 // index in the request's kernels
	device int32 // global device index
	amt    int64
}
