package node

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// appHost is the only host address kernels' ports are published on: the
// agent's endpoint is the way in from outside.
const appHost = "127.0.0.1"

// EnvAppToken is the variable that gives a kernel its app token: the
// secret the agent adds as "Authorization: token <app token>" to the
// requests it forwards to the kernel's apps (Jupyter takes it as its
// token), so the user never needs to see it.
const EnvAppToken = "CAIRN_APP_TOKEN"

// DefaultAppPortRange is where the agent takes the host ports of kernels'
// apps from, unless Config.AppPortRange says otherwise.
var DefaultAppPortRange = PortRange{First: 30000, Last: 30999}

// PortRange is an inclusive range of TCP ports.
type PortRange struct{ First, Last int }

// ParsePortRange reads "first-last" (or a single port).
func ParsePortRange(s string) (PortRange, error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
	if !isRange {
		hi = lo
	}
	first, err1 := strconv.Atoi(strings.TrimSpace(lo))
	last, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil {
		return PortRange{}, fmt.Errorf("port range %q: want first-last, such as 30000-30999", s)
	}
	r := PortRange{First: first, Last: last}
	return r, r.Validate()
}

// Validate checks 1 <= First <= Last <= 65535.
func (r PortRange) Validate() error {
	if r.First < 1 || r.Last > 65535 || r.First > r.Last {
		return fmt.Errorf("port range %s: want 1 <= first <= last <= 65535", r)
	}
	return nil
}

func (r PortRange) String() string { return strconv.Itoa(r.First) + "-" + strconv.Itoa(r.Last) }

// Set and Type make a PortRange a command-line flag (pflag.Value).
func (r *PortRange) Set(s string) error {
	v, err := ParsePortRange(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

func (r *PortRange) Type() string { return "range" }

// portTable hands out host ports for kernels' apps: each host port to one
// kernel at a time, only ports nothing else on the host holds (probe), the
// lowest free first. Reserved ports come back when their kernel is
// released. It is safe for concurrent use.
type portTable struct {
	rng PortRange
	// probe reports whether the port can be bound on appHost now.
	probe func(port int) bool

	mu    sync.Mutex
	owner map[int]uuid.UUID
}

func newPortTable(rng PortRange) *portTable {
	return &portTable{rng: rng, probe: canBind, owner: map[int]uuid.UUID{}}
}

// canBind reports whether nothing holds the port on appHost (a process
// listening on every interface holds it too).
func canBind(port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort(appHost, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}

// allocate gives each service port of a kernel a host port of its own. It
// is all or nothing: when the range runs out, nothing stays reserved and
// the error says so (the kernel cannot start).
func (t *portTable) allocate(kernel uuid.UUID, wanted []domain.ServicePort) ([]domain.PublishedPort, error) {
	if len(wanted) == 0 {
		return nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]domain.PublishedPort, 0, len(wanted))
	next := t.rng.First
	for _, sp := range wanted {
		for ; next <= t.rng.Last; next++ {
			if _, taken := t.owner[next]; !taken && t.probe(next) {
				break
			}
		}
		if next > t.rng.Last {
			for _, p := range out {
				delete(t.owner, p.HostPort)
			}
			return nil, fmt.Errorf("app %s: no free host port left in the agent's app port range %s", sp.Name, t.rng)
		}
		t.owner[next] = kernel
		out = append(out, domain.PublishedPort{Name: sp.Name, Protocol: sp.Protocol, ContainerPort: sp.Port, HostPort: next})
		next++
	}
	return out, nil
}

// reserve marks ports a kernel already holds (from its record, at start),
// whatever the range says now.
func (t *portTable) reserve(kernel uuid.UUID, ports []domain.PublishedPort) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range ports {
		t.owner[p.HostPort] = kernel
	}
}

// release frees every port of the kernel.
func (t *portTable) release(kernel uuid.UUID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for port, k := range t.owner {
		if k == kernel {
			delete(t.owner, port)
		}
	}
}

// held returns, sorted, the host ports the kernel holds.
func (t *portTable) held(kernel uuid.UUID) []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []int
	for port, k := range t.owner {
		if k == kernel {
			out = append(out, port)
		}
	}
	slices.Sort(out)
	return out
}

// kernelApps is what the agent serves a kernel's apps with: the host
// ports it published and the kernel's app token.
type kernelApps struct {
	ports []domain.PublishedPort
	token string
}

// hostPort returns the host port of a published container port.
func (k kernelApps) hostPort(containerPort int) (int, bool) {
	for _, p := range k.ports {
		if p.ContainerPort == containerPort {
			return p.HostPort, true
		}
	}
	return 0, false
}

// newAppToken is a fresh random app token: 32 bytes, hex.
func newAppToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
