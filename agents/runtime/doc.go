// Package runtime is the node agent's container runtime port: what the
// reconciler needs from whatever runs kernels as containers, and the types
// it speaks in.
//
// A kernel is one container. The contract that makes the agent safe to
// restart and safe under at-least-once delivery:
//
//   - Ensure is idempotent by kernel id: a container carrying the label
//     cairn.kernel=<id> is returned as it is, and at most one is ever created
//     for a kernel id, even under concurrent calls from several processes
//     (adapters use the deterministic name ContainerName(kernelID), which the
//     runtime refuses to give twice).
//   - Start runs a kernel at most once: starting a running container, or one
//     that already ran and exited, is a no-op.
//   - List finds the containers an agent owns by the label cairn.agent, so an
//     agent that lost its memory rebuilds its view from the runtime; nothing
//     in this port kills a container except Remove.
//   - Remove is idempotent: a container that is already gone is not an error.
//   - Logs stay readable after the container exits, until Remove.
//   - A terminal (ExecTerminal) is one process with a pseudo-terminal in a
//     running container; Close ends it and what it started, since a
//     detached exec would otherwise run on unseen.
//
// Only containers labelled cairn.managed=true are visible through the port:
// an id that names any other container is reported as ErrNotFound, so the
// agent can never stop or remove what it did not create.
//
// Errors match the sentinels ErrNotFound, ErrUnavailable and ErrInvalid
// with errors.Is; adapters translate their driver's errors at the boundary.
// Adapters live in sub-packages named after their mechanism (podman).
package runtime
