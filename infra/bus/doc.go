// Package bus is Cairn's message bus: NATS JetStream through watermill
// (watermill-nats), behind a small API that hides both. The forwarder
// publishes the events agents act on (allocations) to each agent's topic;
// agents publish their reports (kernel started, failed, exited; heartbeats)
// to the reports topic. Delivery is at least once and every consumer is
// idempotent by message UUID, which is the event id.
//
// # API
//
//	b, err := bus.Connect(ctx, bus.Config{URL: "nats://host:4222", CredentialsFile: "manager.creds"}, logger)
//	defer b.Close()
//
//	topic, err := bus.AgentTopic(agentID)         // cairn.agent.<agentID>
//	msg, err := bus.NewEventMessage(recorded)     // envelope payload, UUID = event id
//	err = b.Publish(ctx, topic, msg)              // returns once JetStream stored it
//
//	err = b.Handle(ctx, topic, "agent-"+agentID, func(ctx context.Context, m *message.Message) error {
//		ev, err := bus.DecodeEvent(m)
//		if err != nil {
//			return bus.Permanent(err) // never decodes: drop, do not retry
//		}
//		return apply(ctx, ev) // nil: ack; error: retried after a backoff
//	}) // blocks until ctx ends or b.Close
//
// # Subjects, streams, consumers
//
// Topics are NATS subjects; every topic lives in one stream, created or
// updated by Connect (file storage, limits retention, discard old,
// max_msg_size MaxMessageSize, Config.Replicas copies):
//
//	cairn.agent.<agent id>     stream CAIRN_AGENTS  (subjects cairn.agent.*),   kept Config.AgentMaxAge (7 days)
//	cairn.reports.<agent id>   stream CAIRN_REPORTS (subjects cairn.reports.*), kept Config.ReportMaxAge (24 hours)
//
// The manager consumes every agent's reports with the filter ReportsTopic
// (cairn.reports.*); an agent publishes on its own ReportTopic, and the
// subject a report arrived on (MetaSubject, set on receipt) names its
// sender: ReportSender.
//
// # Who may do what
//
// The bus is authenticated (package busauth): the manager's credentials
// have no limits; an agent's allow exactly AgentPermissions: publishing on
// its reports topic, binding to and acknowledging its consumer
// (AgentDurable) of its topic, receiving that consumer's deliveries and
// its replies (AgentInboxPrefix). A Bus connected with Config.AgentID
// works within those rights: it provisions nothing, publishes only to its
// reports topic and consumes only its own topic, through the consumer the
// manager made for it (EnsureAgentConsumer; Handle waits for it).
//
// Agent ids and durable names are ASCII letters, digits, '-' and '_'
// (ValidateID): an id that would change a subject's meaning (a dot, a
// space, '*' or '>') is rejected, never rewritten.
//
// Handle(ctx, topic, durable, h) consumes through a durable push consumer
// named durable in the topic's stream, filtered on the topic, with explicit
// acks, deliver-all, at most Config.MaxInFlight unacknowledged messages,
// Config.AckWait, and a deliver group named durable that pushes to
// _CAIRN.deliver.<stream>.<durable>. The consumer outlives the process: a
// restarted Handle resumes with the first message not yet acknowledged.
// Handles with the same durable share the messages (server replicas). One
// durable name consumes one topic; reusing it for another is refused.
//
// Each Handle runs a watermill message.Router over a watermill-nats
// subscriber, with watermill's Retry and Recoverer middleware (see
// newRouter). The Router's own shutdown would let watermill-nats drop the
// messages prefetched for this process unacknowledged, to come back only
// after AckWait; a subscriber of the Bus's own (handOver) stands between
// them and hands those messages back on stop.
//
// # Delivery semantics
//
//   - Publish returns once JetStream has stored the message. The message
//     UUID is sent as Nats-Msg-Id, so JetStream drops a copy republished
//     within Config.DuplicateWindow (a forwarder retrying after a crash).
//   - A handler returning nil acks the message (the ack is confirmed by
//     the server before the next message); an error retries it: the
//     handler is called again after Config.RetryMin, doubling up to
//     Config.RetryMax, at most Config.Retries times in this process; a
//     message still failing is nacked and JetStream redelivers it after
//     the same backoff counted in deliveries, without limit unless
//     Config.MaxDeliveries is set. An error wrapping ErrPermanent (see
//     Permanent) drops it. A handler that panics counts as failing (the
//     panic and its stack are logged; the process lives). A message not
//     acked within Config.AckWait (the handler's context ends then, which
//     also ends its retries) is redelivered.
//   - Messages of one Handle are handled one at a time, in publish order;
//     a message retried in this process holds back the ones behind it,
//     one handed back to JetStream comes again behind later ones.
//     Consumers needing order across redeliveries use the envelope's
//     revision or position.
//   - Stopping a Handle (ctx or Close) ends the running handler's context
//     and any retry's wait, lets the handler return, acks or nacks its
//     message, then nacks what was prefetched: nothing waits for AckWait to
//     come back to the next Handle of that durable.
//   - A message may thus arrive more than once; Attempt tells which
//     delivery it is (retries in this process share their delivery's).
//
// Consumers are never deleted by Cairn: the consumer of a decommissioned
// agent stays until an operator removes it (nats consumer rm CAIRN_AGENTS
// agent-<id>); its messages expire with AgentMaxAge.
//
// # External NATS (production)
//
// The server (or every cluster node) needs JetStream enabled and
// max_payload of at least MaxMessageSize (NATS defaults to 1 MiB; Connect
// refuses a smaller one):
//
//	max_payload: 4MB
//	jetstream { store_dir: /data/nats }
//
// With Replicas 3 on a three-node cluster. The NATS user the manager
// connects as needs to publish to cairn.>, $JS.API.> (or only the stream and
// consumer APIs of CAIRN_AGENTS and CAIRN_REPORTS) and $JS.ACK.>, and to
// subscribe to _CAIRN.deliver.> and _INBOX.>; agents need only
// AgentPermissions. If an operator manages the streams, set
// Config.SkipProvisioning and create them as above. One Cairn installation
// per NATS account: the subjects and stream names are fixed. A server with
// a private CA is verified with Config.CAFile.
//
// Package natsembed runs the embedded server of `cairn dev` with these
// settings.
package bus
