package placement_test

import (
	"fmt"
	"slices"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/placement"
	"github.com/google/uuid"
)

// checkResult verifies one result against its input.
func checkResult(in placement.Input, r placement.Result) error {
	sessions := map[uuid.UUID]*placement.Session{}
	for i := range in.Sessions {
		sessions[in.Sessions[i].ID] = &in.Sessions[i]
	}
	agents := map[string]*placement.Agent{}
	devices := map[string]placement.Device{}
	for i := range in.Agents {
		agents[in.Agents[i].ID] = &in.Agents[i]
		for _, d := range in.Agents[i].Devices {
			devices[d.ID] = d
		}
	}
	if len(r.Placed)+len(r.Unplaced) != len(in.Sessions) {
		return fmt.Errorf("%d placed + %d unplaced of %d sessions", len(r.Placed), len(r.Unplaced), len(in.Sessions))
	}
	seen := map[uuid.UUID]bool{}
	placedOn := map[string]domain.Slots{}       // agent → slots placed
	deviceTaken := map[string]domain.Quantity{} // device → shares placed
	bySubject := map[string]domain.Slots{}      // "user/u1" → slots placed
	sessionsOf := map[string]int{}              // access key → sessions placed
	for _, p := range r.Placed {
		s := sessions[p.SessionID]
		if s == nil || seen[p.SessionID] {
			return fmt.Errorf("placed session %s unknown or twice", p.SessionID)
		}
		seen[p.SessionID] = true
		if err := checkPlacement(in, s, p, agents, devices); err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		total := domain.Slots{}
		for i, k := range p.Kernels {
			placedOn[k.AgentID] = placedOn[k.AgentID].Add(s.Kernels[i].Slots)
			total = total.Add(s.Kernels[i].Slots)
			for _, d := range k.Devices {
				if devices[d.DeviceID].Kind != domain.SlotCUDADevice || s.Kernels[i].Slots[domain.SlotCUDADevice] > 0 {
					deviceTaken[d.DeviceID] += domainWhole(devices[d.DeviceID])
				} else {
					deviceTaken[d.DeviceID] += d.Amount
				}
			}
		}
		for _, key := range []string{"keypair/" + s.AccessKey, "user/" + s.UserID, "project/" + s.Project, "domain/" + s.Domain} {
			bySubject[key] = bySubject[key].Add(total)
		}
		sessionsOf[s.AccessKey]++
	}
	for _, u := range r.Unplaced {
		if sessions[u.SessionID] == nil || seen[u.SessionID] {
			return fmt.Errorf("unplaced session %s unknown or twice", u.SessionID)
		}
		seen[u.SessionID] = true
		if len(u.Failures) == 0 {
			return fmt.Errorf("session %s unplaced without a reason", u.SessionID)
		}
	}
	// No oversubscription: of any slot placements touched, of any device.
	for id, placed := range placedOn {
		a := agents[id]
		free := a.Capacity.Sub(a.Occupied)
		for name, v := range placed {
			if v > 0 && v > free[name] {
				return fmt.Errorf("agent %s: %s placed %s, free %s", id, name, v, free[name])
			}
		}
	}
	for id, taken := range deviceTaken {
		d := devices[id]
		c := domainWhole(d)
		if taken+d.Used > c {
			return fmt.Errorf("device %s: used %s + placed %s > %s", id, d.Used, taken, c)
		}
	}
	// No quota exceeded, concurrency included.
	check := func(key string, u placement.Usage) error {
		for name, v := range bySubject[key] {
			if v == 0 {
				continue
			}
			limit, ok := u.Limits[name]
			if !ok && u.Unspecified == placement.UnspecifiedUnlimited {
				continue
			}
			if u.Occupied[name]+v > limit {
				return fmt.Errorf("%s: %s occupied %s + placed %s > limit %s", key, name, u.Occupied[name], v, limit)
			}
		}
		return nil
	}
	for k, u := range in.Quotas.Keypairs {
		if err := check("keypair/"+k, u.Usage); err != nil {
			return err
		}
		if n := sessionsOf[k]; n > 0 && u.MaxConcurrentSessions > 0 && u.ConcurrentSessions+n > u.MaxConcurrentSessions {
			return fmt.Errorf("keypair %s: %d + %d sessions > %d", k, u.ConcurrentSessions, n, u.MaxConcurrentSessions)
		}
	}
	for prefix, m := range map[string]map[string]placement.Usage{"user/": in.Quotas.Users, "project/": in.Quotas.Projects, "domain/": in.Quotas.Domains} {
		for k, u := range m {
			if err := check(prefix+k, u); err != nil {
				return err
			}
		}
	}
	return nil
}

func domainWhole(d placement.Device) domain.Quantity {
	if d.Kind == domain.SlotCUDADevice && d.ShareCapacity > 0 {
		return d.ShareCapacity
	}
	return domain.DeviceShareCapacity
}

// checkPlacement: every kernel placed once, in order, on a schedulable
// agent the session may use, single-node sessions on one agent, devices
// exactly matching the accelerator request; the session passes its
// checks.
func checkPlacement(in placement.Input, s *placement.Session, p placement.Placement, agents map[string]*placement.Agent, devices map[string]placement.Device) error {
	if len(p.Kernels) != len(s.Kernels) {
		return fmt.Errorf("%d of %d kernels placed", len(p.Kernels), len(s.Kernels))
	}
	if !s.StartsAt.IsZero() && in.Now.Before(s.StartsAt) {
		return fmt.Errorf("placed before starts_at")
	}
	for _, d := range s.Dependencies {
		if d.State != placement.DependencySucceeded {
			return fmt.Errorf("placed before dependency %s succeeded", d.SessionID)
		}
	}
	frag := in.Ungrouped.AllowFractionalFragmentation
	for _, g := range in.Groups {
		if g.Name == s.ResourceGroup {
			frag = g.AllowFractionalFragmentation
			if g.Inactive || (g.Access != nil && !slices.Contains(g.Access.Projects, s.Project) && !slices.Contains(g.Access.AccessKeys, s.AccessKey)) {
				return fmt.Errorf("placed in a group it may not use")
			}
		}
	}
	for i, k := range p.Kernels {
		a := agents[k.AgentID]
		switch {
		case k.KernelID != s.Kernels[i].ID:
			return fmt.Errorf("kernel %d is %s, want %s", i, k.KernelID, s.Kernels[i].ID)
		case a == nil || !a.Schedulable:
			return fmt.Errorf("kernel %d on agent %q, unknown or unschedulable", i, k.AgentID)
		case len(in.Groups) > 0 && a.ResourceGroup != s.ResourceGroup:
			return fmt.Errorf("kernel %d on agent %s of group %s, the session is in %s", i, a.ID, a.ResourceGroup, s.ResourceGroup)
		case s.Architecture != "" && a.Architecture != s.Architecture:
			return fmt.Errorf("kernel %d on an %s agent", i, a.Architecture)
		case s.ClusterMode != domain.ClusterMultiNode && k.AgentID != p.Kernels[0].AgentID:
			return fmt.Errorf("a single-node session spans agents")
		}
		if err := checkDevices(s.Kernels[i].Slots, k.Devices, a, devices, frag); err != nil {
			return fmt.Errorf("kernel %d: %w", i, err)
		}
	}
	return nil
}

func checkDevices(slots domain.Slots, shares []domain.DeviceShare, a *placement.Agent, devices map[string]placement.Device, frag bool) error {
	var slot domain.SlotName
	for name, v := range slots {
		if v > 0 && domain.IsAccelerator(name) {
			slot = name
		}
	}
	if slot == "" {
		if len(shares) > 0 {
			return fmt.Errorf("devices without an accelerator request")
		}
		return nil
	}
	kind := slot
	if slot == domain.SlotCUDAShares {
		kind = domain.SlotCUDADevice
	}
	var sum, lo, hi domain.Quantity
	lo = 1 << 40
	for i, d := range shares {
		dev, ok := devices[d.DeviceID]
		switch {
		case !ok || !slices.ContainsFunc(a.Devices, func(x placement.Device) bool { return x.ID == d.DeviceID }):
			return fmt.Errorf("device %s is not the agent's", d.DeviceID)
		case dev.Kind != kind:
			return fmt.Errorf("device %s is a %s, %s needs a %s", d.DeviceID, dev.Kind, slot, kind)
		case i > 0 && shares[i-1].DeviceID >= d.DeviceID:
			return fmt.Errorf("devices not sorted or repeated")
		case slot != domain.SlotCUDAShares && (d.Amount != domain.DeviceShareCapacity || dev.Used != 0):
			return fmt.Errorf("whole device %s: amount %s, used %s", d.DeviceID, d.Amount, dev.Used)
		case d.Amount <= 0:
			return fmt.Errorf("device %s: amount %s", d.DeviceID, d.Amount)
		}
		sum += d.Amount
		lo, hi = min(lo, d.Amount), max(hi, d.Amount)
	}
	if slot != domain.SlotCUDAShares {
		if domain.Quantity(len(shares))*domain.DeviceShareCapacity != slots[slot] {
			return fmt.Errorf("%d devices for %s %s", len(shares), slot, slots[slot])
		}
		return nil
	}
	if sum != slots[slot] {
		return fmt.Errorf("shares sum to %s, requested %s", sum, slots[slot])
	}
	var maxCap domain.Quantity
	for _, d := range a.Devices {
		if d.Kind == domain.SlotCUDADevice {
			maxCap = max(maxCap, domainWhole(d))
		}
	}
	if sum <= maxCap && len(shares) != 1 {
		return fmt.Errorf("%s split over %d devices though one device holds it", sum, len(shares))
	}
	if !frag && hi-lo > 10 {
		return fmt.Errorf("parts %s..%s are not near-equal", lo, hi)
	}
	return nil
}
