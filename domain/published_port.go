package domain

import (
	"slices"
	"strconv"
)

// Service port protocols (ServicePort.Protocol): an HTTP app, a raw TCP
// service, or a port the session asked to pre-open (an HTTP app too).
const (
	ServiceProtocolHTTP    = "http"
	ServiceProtocolTCP     = "tcp"
	ServiceProtocolPreopen = "preopen"
)

// MaxPreopenPorts bounds the extra ports one session may pre-open.
const MaxPreopenPorts = 16

// PreopenPortName is the app name of a pre-opened container port:
// port-<n>.
func PreopenPortName(port int) string { return "port-" + strconv.Itoa(port) }

// SessionServicePorts are the ports an agent publishes for a kernel: the
// image's service ports, then each pre-opened port that is not already one
// of them (as app port-<n>, protocol preopen), in the order given.
func SessionServicePorts(image []ServicePort, preopen []int) []ServicePort {
	if len(image) == 0 && len(preopen) == 0 {
		return nil
	}
	out := slices.Clone(image)
	for _, p := range preopen {
		if slices.ContainsFunc(out, func(sp ServicePort) bool { return sp.Port == p }) {
			continue
		}
		out = append(out, ServicePort{Name: PreopenPortName(p), Protocol: ServiceProtocolPreopen, Port: p})
	}
	return out
}

// PublishedPort is a service port of a running kernel as its agent
// published it: the app's name and protocol, its port in the container,
// and the host port it is mapped to. The host port is on the agent's
// loopback interface only: nothing but the agent (which proxies signed
// requests to it) reaches it, so it is no secret, and no way in either.
type PublishedPort struct {
	Name          string `json:"name"`
	Protocol      string `json:"protocol"`
	ContainerPort int    `json:"container_port"`
	HostPort      int    `json:"host_port"`
}

// checkPreopenPorts: at most MaxPreopenPorts, each 1..65535, none twice.
func checkPreopenPorts(ports []int, bad func(field, format string, args ...any)) {
	if len(ports) > MaxPreopenPorts {
		bad("preopen_ports", "at most %d ports, not %d", MaxPreopenPorts, len(ports))
		return
	}
	seen := make(map[int]bool, len(ports))
	for _, p := range ports {
		switch {
		case p < 1 || p > 65535:
			bad("preopen_ports", "port %d is not between 1 and 65535", p)
		case seen[p]:
			bad("preopen_ports", "port %d is listed twice", p)
		}
		seen[p] = true
	}
}

// CheckPublishedPorts validates what an agent reports it published: each
// with a name, a known protocol, container and host ports in 1..65535, and
// no name, container port or host port twice. Errors are KindInvalid,
// naming field.
func CheckPublishedPorts(op, field string, ports []PublishedPort) error {
	p := &problems{op: op}
	names, inside, outside := map[string]bool{}, map[int]bool{}, map[int]bool{}
	for _, pp := range ports {
		switch {
		case pp.Name == "" || len(pp.Name) > maxNameLength:
			p.bad(field, "app name %q: 1 to %d bytes", pp.Name, maxNameLength)
		case names[pp.Name]:
			p.bad(field, "app %s is listed twice", pp.Name)
		}
		switch pp.Protocol {
		case ServiceProtocolHTTP, ServiceProtocolTCP, ServiceProtocolPreopen:
		default:
			p.bad(field, "app %s: unknown protocol %q (http, tcp, preopen)", pp.Name, pp.Protocol)
		}
		for _, port := range []struct {
			what string
			n    int
			seen map[int]bool
		}{{"container port", pp.ContainerPort, inside}, {"host port", pp.HostPort, outside}} {
			switch {
			case port.n < 1 || port.n > 65535:
				p.bad(field, "app %s: %s %d is not between 1 and 65535", pp.Name, port.what, port.n)
			case port.seen[port.n]:
				p.bad(field, "app %s: %s %d is used twice", pp.Name, port.what, port.n)
			}
			port.seen[port.n] = true
		}
		names[pp.Name] = true
	}
	return p.err()
}
