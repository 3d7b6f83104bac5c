package domain

import (
	"fmt"
	"strconv"
	"strings"
)

// ServicePortsLabel is the image label that declares the apps an image
// offers, in Backend.AI's format: comma-separated entries
// name:protocol:port, e.g. "jupyter:http:8888,tensorboard:http:6006".
const ServicePortsLabel = "ai.backend.service-ports"

// servicePortsField names the label in errors, as a request spells it.
const servicePortsField = "labels." + ServicePortsLabel

// ParseServicePorts parses the value of ServicePortsLabel. Protocols are
// http, tcp and preopen; pty entries are skipped, as Backend.AI does (a
// terminal is not a container port here: the agent runs it). Backend.AI's
// port lists ("name:tcp:[5000,5001]") are accepted with one port only,
// since a service port here is one container port. An empty label
// declares nothing. Errors are KindInvalid naming labels.<label> and
// every entry that is wrong.
func ParseServicePorts(label string) ([]ServicePort, error) {
	p := &problems{op: "image.service_ports"}
	ports := p.labelServicePorts(label)
	if err := p.err(); err != nil {
		return nil, err
	}
	return ports, nil
}

// labelServicePorts parses the label into ports, reporting problems
// against the label's field.
func (p *problems) labelServicePorts(label string) []ServicePort {
	label = strings.TrimSpace(label)
	if label == "" {
		return []ServicePort{}
	}
	entries := splitEntries(label)
	if len(entries) > maxServicePorts {
		p.bad(servicePortsField, "more than %d entries", maxServicePorts)
		return nil
	}
	out := []ServicePort{}
	names, ports := map[string]bool{}, map[int]bool{}
	for i, entry := range entries {
		bad := func(format string, args ...any) {
			p.bad(servicePortsField, "entry %d %q: %s", i+1, entry, fmt.Sprintf(format, args...))
		}
		sp, skip, ok := parseServicePortEntry(entry, bad)
		switch {
		case !ok || skip:
			continue
		case names[sp.Name]:
			bad("the name %q is declared twice", sp.Name)
			continue
		case ports[sp.Port]:
			bad("port %d is declared twice", sp.Port)
			continue
		}
		names[sp.Name], ports[sp.Port] = true, true
		out = append(out, sp)
	}
	return out
}

// splitEntries splits at the commas outside brackets, so that a port list
// "[5000,5001]" stays in its entry.
func splitEntries(label string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range label {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(label[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(label[start:]))
}

// parseServicePortEntry parses one name:protocol:port entry. skip reports
// an entry of a protocol that declares no container port here (pty); ok
// is false when the entry was reported bad.
func parseServicePortEntry(entry string, bad func(format string, args ...any)) (sp ServicePort, skip, ok bool) {
	parts := strings.Split(entry, ":")
	if len(parts) != 3 {
		bad("want name:protocol:port")
		return sp, false, false
	}
	name, protocol, port := parts[0], parts[1], parts[2]
	ok = true
	checkNameField("", name, func(_, format string, args ...any) {
		bad("the name "+format, args...)
		ok = false
	})
	switch protocol {
	case "http", "tcp", "preopen":
	case "pty":
		skip = true
	case "vnc", "rdp":
		bad("protocol %q is not supported here (http, tcp, preopen)", protocol)
		ok = false
	default:
		bad("unknown protocol %q (http, tcp, preopen, pty)", protocol)
		ok = false
	}
	n, err := parseLabelPort(port)
	if err != nil {
		bad("%v", err)
		ok = false
	}
	return ServicePort{Name: name, Protocol: protocol, Port: n}, skip, ok
}

// parseLabelPort parses "8888" or "[8888]": one container port, 1 to 65535.
func parseLabelPort(s string) (int, error) {
	if inner, found := strings.CutPrefix(s, "["); found {
		inner, closed := strings.CutSuffix(inner, "]")
		if !closed {
			return 0, fmt.Errorf("the port list %q has no closing ']'", s)
		}
		if strings.Contains(inner, ",") {
			return 0, fmt.Errorf("several ports in one entry are not supported; declare one entry per port")
		}
		s = inner
	}
	if s == "" || len(s) > 5 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("the port %q is not a number", s)
	}
	n, _ := strconv.Atoi(s)
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("the port %d is not between 1 and 65535", n)
	}
	return n, nil
}
