// Package accelerator is the node agent's view of its GPUs, free of any
// driver: the devices a node has (whole GPUs and MIG devices), the resource
// slots they add to the agent's capacity, and how a kernel's device
// assignment becomes what its container is given.
//
// The pieces, each pure and deterministic:
//
//   - Inventory lists what discovery found (see the nvml sub-package).
//     Capacity turns it into slots: cuda.device and cuda.shares count the
//     whole GPUs that are not in MIG mode (a GPU's share capacity is 1.0),
//     cuda.mem sums their memory, and every MIG profile is a unique slot
//     counting its MIG devices. AgentSpec and DomainDevices hand the same
//     facts to the agent aggregate (domain.AgentSpec, domain.Device).
//   - ContainerDevices maps an allocation's device shares (domain.DeviceShare)
//     to CDI device names or NVIDIA_VISIBLE_DEVICES, plus the CUDA MPS limits
//     for fractional shares. A kernel without an assignment always gets
//     NVIDIA_VISIBLE_DEVICES=void, so a container never sees a GPU it was not
//     given, whatever its image sets.
//   - DetectCDI finds the NVIDIA CDI specs (kind nvidia.com/gpu) that tell
//     whether the container runtime can inject GPUs by CDI name.
//
// Errors are domain errors (errors.Is with domain.ErrInvalid, ...).
package accelerator
