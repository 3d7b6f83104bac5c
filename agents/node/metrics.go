package node

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The agent's metrics, served on Config.Listen's /metrics.
var (
	// kernelsUserNS tells an operator whether this agent's kernels run in
	// their own user namespace (1) or as the host's root (0).
	kernelsUserNS = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "cairn_agent_kernel_userns_private",
		Help: "1 when kernels run in a private user namespace (their root is an unprivileged host id), 0 when their root is the host's root.",
	})
	// mountEntriesClaimed counts the files and folders of read-write
	// mounts the agent gave to the kernels' user namespace.
	mountEntriesClaimed = promauto.NewCounter(prometheus.CounterOpts{
		Name: "cairn_agent_mount_entries_claimed_total",
		Help: "Files and folders of read-write mounts whose host owner the agent changed to the kernels' user namespace root.",
	})
)
