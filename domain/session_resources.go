package domain

// validateResources checks the per-kernel slots of a request and returns
// them without zero amounts. Rules: known
// slot names, no negative amounts, cpu and mem present and positive, whole
// bytes for byte slots, at most one accelerator slot (cuda.device,
// cuda.shares and MIG profiles are mutually exclusive), cuda.shares in
// steps of 0.01, device counts whole, a MIG profile exactly 1.
func validateResources(op string, slots Slots) (Slots, []error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, Invalid(op, field, format, args...))
	}
	out := make(Slots, len(slots))
	for _, name := range slots.Names() {
		v := slots[name]
		field := "resources." + string(name)
		t, known := SlotTypeOf(name)
		switch {
		case !known:
			bad(field, "unknown resource slot")
			continue
		case v < 0:
			bad(field, "must not be negative")
			continue
		case v == 0:
			continue
		case t == SlotBytes && !v.IsWhole():
			bad(field, "must be a whole number of bytes")
		case t == SlotUnique && v != Units(1):
			bad(field, "a MIG profile slot takes exactly 1, not %s", v)
		case name == SlotCUDAShares && int64(v)%(QuantityScale/100) != 0:
			bad(field, "must be a multiple of 0.01, not %s", v)
		case IsAccelerator(name) && name != SlotCUDAShares && t == SlotCount && !v.IsWhole():
			bad(field, "must be a whole number of devices, not %s", v)
		}
		out[name] = v
	}
	if len(out) == 0 && len(errs) == 0 {
		bad("resources", "required: at least cpu and mem")
		return nil, errs
	}
	for _, name := range []SlotName{SlotCPU, SlotMem} {
		if slots[name] < 0 {
			continue // already reported as negative
		}
		if out[name] <= 0 {
			bad("resources."+string(name), "required and must be positive")
		}
	}
	if accels := acceleratorsOf(out); len(accels) > 1 {
		bad("resources", "accelerator slots %s are mutually exclusive", joinSlotNames(accels))
	}
	return out, errs
}
