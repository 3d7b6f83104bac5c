package podman

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/containers/podman/v5/libpod/define"
	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/domain/entities/types"

	"github.com/cairnhq/cairn/agents/runtime"
)

// inspectTries and inspectRetry bound the retries of an inspect that raced
// with the kernel's exit.
const (
	inspectTries = 5
	inspectRetry = 20 * time.Millisecond
)

// exitRace reports whether err is Podman failing to read /proc of a process
// that ended during the inspect ("open /proc/16044/cgroup: no such
// process"), which is not a fault of the container.
func exitRace(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "/proc/") &&
		(strings.Contains(msg, "no such process") || strings.Contains(msg, "no such file or directory"))
}

// Inspect reports a managed container's current state. Any other container
// is runtime.ErrNotFound.
func (r *Runtime) Inspect(ctx context.Context, id string) (runtime.Container, error) {
	if id == "" {
		return runtime.Container{}, fmt.Errorf("podman: inspect: %w: empty container id", runtime.ErrInvalid)
	}
	data, err := containers.Inspect(r.call(ctx), id, nil)
	for try := 1; err != nil && exitRace(err) && try < inspectTries; try++ {
		// The kernel exited while Podman was reading its process: the next
		// look finds it exited.
		select {
		case <-ctx.Done():
		case <-time.After(inspectRetry):
		}
		data, err = containers.Inspect(r.call(ctx), id, nil)
	}
	if err != nil {
		return runtime.Container{}, translate(ctx, "inspect "+id, err)
	}
	c := fromInspect(data)
	if !runtime.Managed(c.Labels) {
		return runtime.Container{}, fmt.Errorf("podman: inspect %s: %w: not a container Cairn manages", id, runtime.ErrNotFound)
	}
	return c, nil
}

// List returns every managed container labelled with agentID, in any
// state. Its timestamps have the one-second precision of Podman's list.
func (r *Runtime) List(ctx context.Context, agentID string) ([]runtime.Container, error) {
	if agentID == "" {
		return nil, fmt.Errorf("podman: list: %w: empty agent id", runtime.ErrInvalid)
	}
	return r.list(ctx, runtime.LabelAgent, agentID)
}

// list returns the managed containers whose label key has value.
func (r *Runtime) list(ctx context.Context, key, value string) ([]runtime.Container, error) {
	opts := &containers.ListOptions{
		All: ptr(true),
		// Several label filters must all match.
		Filters: map[string][]string{"label": {
			runtime.LabelManaged + "=" + runtime.ManagedValue,
			key + "=" + value,
		}},
	}
	found, err := containers.List(r.call(ctx), opts)
	if err != nil {
		return nil, translate(ctx, "list "+key+"="+value, err)
	}
	out := make([]runtime.Container, 0, len(found))
	for _, lc := range found {
		// The filter is the service's; check what the port promises.
		if runtime.Managed(lc.Labels) && lc.Labels[key] == value {
			out = append(out, fromList(lc))
		}
	}
	return out, nil
}

func fromInspect(d *define.InspectContainerData) runtime.Container {
	c := runtime.Container{ID: d.ID, Name: d.Name, Image: d.ImageName, State: runtime.StateUnknown}
	if d.Config != nil {
		c.SetLabels(d.Config.Labels)
	}
	if s := d.State; s != nil {
		c.State = stateOf(s.Status)
		c.ExitCode = int(s.ExitCode)
		c.StartedAt = s.StartedAt
		c.FinishedAt = s.FinishedAt
	}
	return c
}

func fromList(lc types.ListContainer) runtime.Container {
	c := runtime.Container{
		ID:         lc.ID,
		Image:      lc.Image,
		State:      stateOf(lc.State),
		ExitCode:   int(lc.ExitCode),
		StartedAt:  unixTime(lc.StartedAt),
		FinishedAt: unixTime(lc.ExitedAt),
	}
	if len(lc.Names) > 0 {
		c.Name = lc.Names[0]
	}
	c.SetLabels(lc.Labels)
	return c
}

// unixTime converts Podman's list timestamps, where "never" is the zero
// time's (negative) Unix seconds.
func unixTime(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// stateOf normalises Podman's container states.
func stateOf(status string) runtime.State {
	switch status {
	case "configured", "created", "initialized":
		return runtime.StateCreated
	case "running", "stopping":
		return runtime.StateRunning
	case "paused":
		return runtime.StatePaused
	case "stopped", "exited":
		return runtime.StateExited
	case "removing":
		return runtime.StateRemoving
	}
	return runtime.StateUnknown
}
