// Package agentlogs serves the manager's GET /v1/sessions/{id}/logs: it
// fetches a kernel's logs from the agent that runs it.
//
// An agent running in this process (the local agent of `cairn dev`) is
// asked directly (node.Agent.Logs, and node.Agent.StreamLogs writing a
// byte range into a pipe). Any other agent is asked over HTTP, at the base
// URL it announced in its agent.register
// (GET {address}/kernels/{kernel id}/logs?tail=N, or ?offset=&limit=&follow=
// for a byte range, see agents/node and agents/protocol): an
// AddressBook learns those URLs from the reports topic, as a durable
// consumer of its own beside the manager's, and keeps them in a file so a
// restarted manager still knows them. An agent without an address (started
// without --listen) has its logs answered with a KindUnavailable error
// that says so.
package agentlogs
