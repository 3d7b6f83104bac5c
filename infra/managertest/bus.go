package managertest

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/bustest"
)

// Bus starts an authenticated embedded NATS JetStream server in a
// temporary directory (bustest) and connects a bus to it as the manager,
// with short retries; both stop when the test ends.
func (e *Env) Bus() *bus.Bus {
	e.T.Helper()
	srv := bustest.Start(e.T, e.Log)
	b, err := bus.Connect(context.Background(), bus.Config{
		URL: srv.ClientURL(), ClientName: "cairn-test", CredentialsFile: srv.ManagerCredentials(e.T),
		AckWait: 10 * time.Second, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond,
		DrainTimeout: 5 * time.Second,
	}, e.Log)
	if err != nil {
		e.T.Fatalf("connect the bus: %v", err)
	}
	e.T.Cleanup(func() {
		if err := b.Close(); err != nil {
			e.T.Errorf("close the bus: %v", err)
		}
	})
	return b
}

// Received is a protocol message as an agent receives it.
type Received struct {
	ID      string
	Message protocol.Message
}

// Listen consumes an agent's topic (as that agent would, durable
// agent-<id>) and hands every message it decodes to the returned channel.
func (e *Env) Listen(b *bus.Bus, agentID string) <-chan Received {
	e.T.Helper()
	topic, err := bus.AgentTopic(agentID)
	if err != nil {
		e.T.Fatal(err)
	}
	ch := make(chan Received, 256)
	Go(e.T, "listen "+topic, func(ctx context.Context) error {
		return b.Handle(ctx, topic, "agent-"+agentID, func(ctx context.Context, msg *message.Message) error {
			if err := protocol.Open(msg, e.sealKeyPair(agentID)); err != nil {
				e.T.Errorf("%s: a message the agent cannot open: %v", topic, err)
				return bus.Permanent(err)
			}
			m, err := protocol.Decode(msg)
			if err != nil {
				e.T.Errorf("%s: undecodable message: %v", topic, err)
				return bus.Permanent(err)
			}
			select {
			case ch <- Received{ID: msg.UUID, Message: m}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})
	return ch
}

// Next returns the next message on ch, failing the test after WaitTimeout.
func (e *Env) Next(ch <-chan Received) Received {
	e.T.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(WaitTimeout):
		e.T.Fatal("no message arrived")
		return Received{}
	}
}

// Report publishes an agent's report on that agent's reports topic (the
// test's bus, the manager's, may publish on any).
func (e *Env) Report(b *bus.Bus, m protocol.Message) string {
	e.T.Helper()
	return e.ReportAs(b, m.Agent(), m)
}

// ReportAs publishes m on sender's reports topic, as if sender's
// credentials had sent it (a forgery when sender is not m.Agent()).
func (e *Env) ReportAs(b *bus.Bus, sender string, m protocol.Message) string {
	e.T.Helper()
	if r, ok := m.(protocol.AgentRegister); ok && r.SealKey == "" {
		r.SealKey = e.SealKey(r.AgentID)
		m = r
	}
	msg, err := protocol.NewMessage(m)
	if err != nil {
		e.T.Fatal(err)
	}
	topic, err := bus.ReportTopic(sender)
	if err != nil {
		e.T.Fatal(err)
	}
	if err := b.Publish(context.Background(), topic, msg); err != nil {
		e.T.Fatal(err)
	}
	return msg.UUID
}
