package protocol

import (
	"strconv"

	"github.com/google/uuid"
)

// TunnelUpgrade is the Upgrade token of a raw TCP tunnel to a kernel's
// published port, on the agent's HTTP endpoint (TunnelPath).
const TunnelUpgrade = "cairn-tunnel"

// AppTokenHeader asks for, on a tunnel's upgrade request (value
// AppTokenWanted), and carries, on the agent's 101 answer, the kernel's app
// token: the secret an app such as Jupyter expects as "Authorization:
// token <app token>". The app proxy, which speaks HTTP to the app through
// the tunnel, adds it to requests that bring no Authorization of their
// own, as the agent does on AppPath. The token only opens the app from the
// agent's loopback, where the port is published.
const AppTokenHeader = "Cairn-App-Token"

// AppTokenWanted is AppTokenHeader's value on the upgrade request.
const AppTokenWanted = "want"

// AppPath is the path prefix, on an agent's HTTP endpoint, of the app a
// kernel serves on a container port: a request to AppPath(k, p) + "/x?q"
// is forwarded to the app as "/x?q". The request must be signed by the
// manager's key (busauth.Keys.SignAgentRequest), like every request to
// /kernels/.
func AppPath(kernel uuid.UUID, containerPort int) string {
	return "/kernels/" + kernel.String() + "/apps/" + strconv.Itoa(containerPort)
}

// TunnelPath is the path, on an agent's HTTP endpoint, of the raw TCP
// tunnel to a kernel's container port: a signed GET with
// "Connection: Upgrade" and "Upgrade: " + TunnelUpgrade.
func TunnelPath(kernel uuid.UUID, containerPort int) string {
	return "/kernels/" + kernel.String() + "/ports/" + strconv.Itoa(containerPort) + "/tunnel"
}
