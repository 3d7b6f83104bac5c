// Package podman implements the agent's container runtime port
// (agents/runtime) on Podman, through the REST API of `podman system
// service` and the podman v5 Go bindings.
//
// How the port's promises are kept:
//
//   - Idempotent creation: a kernel's container is named
//     runtime.ContainerName(kernelID), so Podman itself refuses a second
//     one. Ensure first looks for a container labelled cairn.kernel=<id>;
//     concurrent calls in one process are serialised per kernel id, and a
//     create that loses the race to another process is answered with the
//     winner's container.
//   - At-most-once start: Start only starts a container in the created
//     state (Podman's own start would re-run an exited one).
//   - Wait on a created container waits for it to be started (Podman's
//     own wait answers 0 at once for a container that never ran).
//   - Logs after exit: containers log through the k8s-file driver, whose
//     file lives as long as the container, so Logs works after it exits and
//     until Remove.
//   - Log ranges: StreamLogs reads that file itself when it can (only
//     whole lines, following what is appended), else the logs API; both
//     give the same bytes, the log as runtime.LogRange defines it.
//   - Terminals: ExecTerminal creates an exec session with a TTY and starts
//     it over an upgraded connection of its own (the bindings'
//     ExecStartAndAttach mutates the shared client and looks at the
//     agent's own stdin). Podman cannot end an exec session and leaves it
//     running when its attachment closes, so each terminal's processes
//     carry a mark in their environment (EnvTerminalMark) and Close ends
//     them from inside the container: SIGHUP, then SIGKILL.
//   - Least privilege: every container runs with no-new-privileges, with
//     every capability dropped but the spec's (runtime.DefaultCapabilities
//     unless it names others), its bind mounts nosuid and nodev, and, when
//     the spec has a runtime.IDMap, in a private user namespace with that
//     one mapping for uids and gids (Podman's IDMappings; containers/storage
//     shifts the image's layers with idmapped mounts where the kernel has
//     them, as here, and with a chowned copy where it does not).
//   - Errors: binding errors are translated to the port's sentinels by type
//     and HTTP status (*errorhandling.ErrorModel with 404, 400, 503;
//     transport failures are runtime.ErrUnavailable), never by message text.
//
// The bindings need the build tags remote, exclude_graphdriver_btrfs,
// btrfs_noversion, exclude_graphdriver_devicemapper and
// containers_image_openpgp.
package podman
