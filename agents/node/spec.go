package node

import (
	"fmt"
	"strconv"

	"github.com/cairnhq/cairn/agents/accelerator"
	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

// LabelAllocationRevision is the label that keeps, on a kernel's
// container, the revision of its allocation in the agent's stream
// (protocol.KernelCreate.AllocationRevision): what kernel.sync compares
// with its AsOfRevision after a restart. Outside the reserved cairn.*
// namespace, which the runtime keeps for its own labels.
const LabelAllocationRevision = "org.cairnhq.allocation-revision"

// Environment variables every kernel gets. (Not the agent's id: CAIRN_AGENT_ID
// sets `cairn agent --agent-id`, and an agent started inside a kernel must
// not take its host's id.)
const (
	EnvKernelID   = "CAIRN_KERNEL_ID"
	EnvSessionID  = "CAIRN_SESSION_ID"
	EnvKernelRole = "CAIRN_KERNEL_ROLE"
)

// buildSpec turns a kernel.create into the container spec: the CPU limit
// in millicores from the cpu slot (at least runtime.MinCPU), the memory
// limit from the mem slot, the devices and variables of the GPU assignment
// (accelerator.ContainerDevices), and the environment: the request's,
// then the CAIRN_* variables, then the GPU variables, later ones winning,
// so a kernel can neither fake its identity nor see a GPU it was not
// given; and its isolation: the agent's user namespace mapping and
// capabilities (Config.UserNS, Config.Capabilities); and its apps: each
// service port published on its host port on 127.0.0.1, and the app
// token in CAIRN_APP_TOKEN (set after the request's variables, like the
// other CAIRN_* ones). Errors are the kernel's fault: it is reported failed.
func buildSpec(cfg Config, inv accelerator.Inventory, cdi accelerator.CDIInfo, m protocol.KernelCreate, apps kernelApps) (runtime.ContainerSpec, error) {
	devices, gpuEnv, err := accelerator.ContainerDevices(m.Devices, inv, cdi)
	if err != nil {
		return runtime.ContainerSpec{}, fmt.Errorf("devices: %w", err)
	}
	env := make(map[string]string, len(m.Env)+len(gpuEnv)+4)
	for k, v := range m.Env {
		env[k] = v
	}
	env[EnvKernelID] = m.KernelID.String()
	env[EnvSessionID] = m.SessionID.String()
	if m.Role != "" {
		env[EnvKernelRole] = string(m.Role)
	}
	if apps.token != "" {
		env[EnvAppToken] = apps.token
	}
	ports := make([]runtime.PortMapping, 0, len(apps.ports))
	for _, p := range apps.ports {
		ports = append(ports, runtime.PortMapping{HostIP: appHost, HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: "tcp"})
	}
	for k, v := range gpuEnv {
		env[k] = v
	}

	cpu := int64(m.Slots[domain.SlotCPU]) // thousandths of a core are millicores
	if cpu > 0 && cpu < runtime.MinCPU {
		cpu = runtime.MinCPU
	}
	mounts := make([]runtime.Mount, 0, len(m.Mounts))
	for _, mt := range m.Mounts {
		mounts = append(mounts, runtime.Mount{Source: mt.Source, Target: mt.Target, ReadOnly: mt.ReadOnly})
	}
	spec := runtime.ContainerSpec{
		KernelID:     m.KernelID.String(),
		SessionID:    m.SessionID.String(),
		AgentID:      cfg.AgentID,
		Image:        m.Image,
		Command:      m.Command,
		Env:          env,
		CPU:          cpu,
		MemoryBytes:  m.Slots[domain.SlotMem].Whole(),
		Rlimits:      cfg.Rlimits,
		Labels:       map[string]string{LabelAllocationRevision: strconv.FormatInt(m.AllocationRevision, 10)},
		Devices:      devices,
		Mounts:       mounts,
		Ports:        ports,
		StopGrace:    cfg.StopGrace,
		UserNS:       cfg.idMap(),
		Capabilities: cfg.Capabilities,
	}.WithDefaults()
	if err := spec.Validate(); err != nil {
		return runtime.ContainerSpec{}, err
	}
	return spec, nil
}
