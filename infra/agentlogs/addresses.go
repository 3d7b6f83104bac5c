package agentlogs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/infra/bus"
)

// DefaultDurable is the AddressBook's durable consumer of the reports
// topic.
const DefaultDurable = "agent-addresses"

// Consumer is the part of the bus an AddressBook uses; *bus.Bus
// satisfies it.
type Consumer interface {
	Handle(ctx context.Context, topic, durable string, h bus.Handler) error
}

var _ Consumer = (*bus.Bus)(nil)

// AddressBook knows the base URL each agent announced in its latest
// agent.register. Build it with OpenAddressBook, feed it with Run. It is
// safe for concurrent use.
type AddressBook struct {
	path string
	log  *slog.Logger

	mu      sync.RWMutex
	entries map[string]entry
}

// entry is what the book keeps of one agent.
type entry struct {
	Address string `json:"address"`
	// At is when the agent sent the agent.register the address came from:
	// a redelivered older one never overwrites a newer one.
	At time.Time `json:"at"`
}

var _ Addresses = (*AddressBook)(nil)

// OpenAddressBook loads the book kept in the file at path (none yet is an
// empty book); its directory must exist. A nil logger means
// slog.Default().
func OpenAddressBook(path string, logger *slog.Logger) (*AddressBook, error) {
	if logger == nil {
		logger = slog.Default()
	}
	b := &AddressBook{path: path, log: logger.With("component", "agent-addresses"), entries: map[string]entry{}}
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return b, nil
	case err != nil:
		return nil, fmt.Errorf("agentlogs: read %s: %w", path, err)
	}
	if err := json.Unmarshal(raw, &b.entries); err != nil {
		return nil, fmt.Errorf("agentlogs: %s does not hold agent addresses: %w", path, err)
	}
	return b, nil
}

// Address implements Addresses.
func (b *AddressBook) Address(agentID string) (string, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	e, ok := b.entries[agentID]
	return e.Address, ok && e.Address != ""
}

// Run consumes the reports topic as the durable consumer durable (empty:
// DefaultDurable) until ctx ends, then returns nil.
func (b *AddressBook) Run(ctx context.Context, c Consumer, durable string) error {
	if durable == "" {
		durable = DefaultDurable
	}
	err := c.Handle(ctx, bus.ReportsTopic, durable, b.handle)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// handle records the address of an agent.register and acknowledges every
// other report unread.
func (b *AddressBook) handle(_ context.Context, msg *message.Message) error {
	if msg.Metadata.Get(protocol.MetaType) != protocol.TypeAgentRegister {
		return nil
	}
	m, err := protocol.Decode(msg)
	if err != nil {
		return bus.Permanent(err)
	}
	reg, ok := m.(protocol.AgentRegister)
	if !ok {
		return nil
	}
	// Only the agent itself may say where it serves: the subject a
	// report arrived on names its sender (bus.ReportSender).
	if sender, ok := bus.ReportSender(msg); !ok || sender != reg.AgentID {
		return bus.Permanent(fmt.Errorf("agentlogs: agent %q announced an address for %q", sender, reg.AgentID))
	}
	return b.Learn(reg.AgentID, reg.Address, reg.At)
}

// Learn records that the agent announced addr at time at (an empty addr:
// it serves no endpoint), unless the book knows a later announcement.
// The book is saved when it changes.
func (b *AddressBook) Learn(agentID, addr string, at time.Time) error {
	if addr != "" {
		if u, err := url.Parse(addr); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bus.Permanent(fmt.Errorf("agentlogs: agent %s announced %q: not an http(s) URL", agentID, addr))
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	old, known := b.entries[agentID]
	if known && old.At.After(at) {
		return nil
	}
	if known && old.Address == addr {
		b.entries[agentID] = entry{Address: addr, At: at}
		return nil // nothing a reader sees changed: no need to write
	}
	next := maps.Clone(b.entries)
	next[agentID] = entry{Address: addr, At: at}
	if err := save(b.path, next); err != nil {
		return err // redelivered: the book catches up when the disk does
	}
	b.entries = next
	if addr == "" {
		b.log.Debug("agent serves no logs endpoint", "agent_id", agentID)
	} else {
		b.log.Info("agent logs endpoint", "agent_id", agentID, "address", addr)
	}
	return nil
}

// save replaces the file atomically.
func save(path string, entries map[string]entry) error {
	raw, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("agentlogs: save addresses: %w", err)
	}
	_, err = tmp.Write(append(raw, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("agentlogs: save addresses: %w", err)
	}
	return nil
}
