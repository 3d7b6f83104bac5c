// Package nvml discovers a node's NVIDIA GPUs through NVML (go-nvml) and
// reports them as an accelerator.Inventory: UUID, model, memory, compute
// capability, MIG mode, and the MIG devices of a GPU in MIG mode with their
// profiles (cuda.device:<profile>-mig) and UUIDs.
//
// What is asked is named by a spec (see ParseSpec):
//
//	nvml                 the real library, libnvidia-ml.so.1 (the driver's)
//	nvml:<path>          the real library at a given path
//	none                 no accelerators
//	mock:<server>        go-nvml's own mock of a DGX server: dgxa100,
//	                     dgxh100, dgxh200 or dgxb200, 8 GPUs each
//	mock:<server>?mig=0,1&profiles=3g.40gb,2g.20gb
//	                     the same with GPUs 0 and 1 in MIG mode, each cut
//	                     into the listed profiles (default: as many 1-slice
//	                     instances as fit); mig=all for every GPU, and
//	                     seed=<s> to vary the mock's UUIDs between nodes
//
// The mocks are what lets the agent run, schedule and slice GPUs end to end
// on a machine without one. Their UUIDs are derived from the server name,
// the GPU index and the seed, so they are the same on every start (an agent
// that restarts must find the devices its allocations name).
//
// A MIG device's profile is read from its GPU instance, which NVML only
// shows a privileged process (root, as a rootful Podman agent runs);
// otherwise discovery fails with nvml.ERROR_NO_PERMISSION rather than
// guess a profile.
//
// NVML is shut down after every use: Discover opens and closes it; Open
// keeps it open until Close. The package needs cgo (go-nvml loads
// libnvidia-ml.so.1 with dlopen at run time, so building needs no driver);
// built without cgo, only the none spec works.
package nvml
