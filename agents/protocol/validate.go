package protocol

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
)

// MaxAgentIDLength is the longest agent id, in bytes: the limit of a bus
// topic token (bus.MaxIDLength).
const MaxAgentIDLength = 128

// ValidateAgentID checks an agent id as the bus does (bus.ValidateID): 1
// to MaxAgentIDLength ASCII letters, digits, '-' and '_', so that the id
// names exactly one topic. The error matches domain.ErrInvalid.
func ValidateAgentID(id string) error {
	const op = "protocol.agent-id"
	switch {
	case id == "":
		return domain.Invalid(op, "agent_id", "required")
	case len(id) > MaxAgentIDLength:
		return domain.Invalid(op, "agent_id", "%q is longer than %d bytes", id, MaxAgentIDLength)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return domain.Invalid(op, "agent_id", "%q: byte %d (%q) is not allowed; use ASCII letters, digits, '-' and '_'", id, i, c)
		}
	}
	return nil
}

// checker collects every problem of one message.
type checker struct {
	op   string
	errs []error
}

func newChecker(messageType string) *checker { return &checker{op: "protocol." + messageType} }

func (c *checker) bad(field, format string, args ...any) {
	c.errs = append(c.errs, domain.Invalid(c.op, field, format, args...))
}

func (c *checker) err() error { return errors.Join(c.errs...) }

func (c *checker) agentID(id string) {
	if err := ValidateAgentID(id); err != nil {
		var de *domain.Error
		if errors.As(err, &de) {
			c.bad("agent_id", "%s", de.Message)
			return
		}
		c.errs = append(c.errs, err)
	}
}

func (c *checker) id(field string, id uuid.UUID) {
	if id == uuid.Nil {
		c.bad(field, "required")
	}
}

func (c *checker) time(field string, t time.Time) {
	if t.IsZero() {
		c.bad(field, "must be set")
	}
}

func (c *checker) slots(field string, s domain.Slots) {
	for _, name := range s.Names() {
		if _, ok := domain.SlotTypeOf(name); !ok {
			c.bad(field+"."+string(name), "unknown resource slot")
		}
		if s[name] < 0 {
			c.bad(field+"."+string(name), "must not be negative")
		}
	}
}

func (c *checker) env(field string, env map[string]string) {
	for k, v := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			c.bad(field, "invalid variable name %q", k)
		}
		if strings.ContainsRune(v, 0) {
			c.bad(field, "variable %s: value contains a NUL byte", k)
		}
	}
}

func (c *checker) shares(field string, shares []domain.DeviceShare) {
	seen := make(map[string]bool, len(shares))
	for i, d := range shares {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case d.DeviceID == "":
			c.bad(f, "device id required")
		case seen[d.DeviceID]:
			c.bad(f, "device %s assigned twice", d.DeviceID)
		}
		seen[d.DeviceID] = true
		if d.Amount <= 0 || d.Amount > domain.DeviceShareCapacity {
			c.bad(f, "amount %s is not in (0, %s]", d.Amount, domain.DeviceShareCapacity)
		}
	}
}

func (c *checker) mounts(field string, mounts []Mount) {
	targets := make(map[string]bool, len(mounts))
	for i, m := range mounts {
		f := fmt.Sprintf("%s[%d]", field, i)
		if !path.IsAbs(m.Source) {
			c.bad(f, "source %q is not an absolute path", m.Source)
		}
		t := path.Clean(m.Target)
		switch {
		case !path.IsAbs(m.Target):
			c.bad(f, "target %q is not an absolute path", m.Target)
		case t == "/":
			c.bad(f, "target may not be /")
		case targets[t]:
			c.bad(f, "target %q is mounted twice", m.Target)
		}
		targets[t] = true
	}
}

func (c *checker) address(field, addr string) {
	if addr == "" {
		return
	}
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.bad(field, "%q is not an http(s) URL", addr)
	}
}

// maxServicePorts bounds the ports of one kernel: an image's (at most 64)
// and a session's pre-opened ones.
const maxServicePorts = 64 + domain.MaxPreopenPorts

// servicePorts: each named once, with a known protocol and a port in
// 1..65535 used once.
func (c *checker) servicePorts(field string, ports []domain.ServicePort) {
	if len(ports) > maxServicePorts {
		c.bad(field, "more than %d service ports", maxServicePorts)
		return
	}
	names, used := map[string]bool{}, map[int]bool{}
	for _, sp := range ports {
		switch {
		case sp.Name == "":
			c.bad(field, "a service port without a name")
		case names[sp.Name]:
			c.bad(field, "service port %s is listed twice", sp.Name)
		}
		switch sp.Protocol {
		case domain.ServiceProtocolHTTP, domain.ServiceProtocolTCP, domain.ServiceProtocolPreopen:
		default:
			c.bad(field, "service port %s: unknown protocol %q", sp.Name, sp.Protocol)
		}
		switch {
		case sp.Port < 1 || sp.Port > 65535:
			c.bad(field, "service port %s: port %d is not between 1 and 65535", sp.Name, sp.Port)
		case used[sp.Port]:
			c.bad(field, "service port %s: port %d is used twice", sp.Name, sp.Port)
		}
		names[sp.Name], used[sp.Port] = true, true
	}
}
