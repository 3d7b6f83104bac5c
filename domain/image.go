package domain

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Image limits.
const (
	// MaxImageReferenceLength keeps image-<reference>@<architecture>
	// within the event store's stream name limit.
	MaxImageReferenceLength = 200
	maxArchitectureLength   = 32
	maxImageLabels          = 256
	maxLabelKeyLength       = 128
	maxServicePorts         = 64
)

// ServicePort is a service an image offers (given at registration or
// declared by the image's ServicePortsLabel): its name, protocol (tcp,
// http, preopen) and container port.
type ServicePort struct {
	Name     string `json:"name"`
	Protocol string `json:"protocol"`
	Port     int    `json:"port"`
}

// ImageSpec is what is known of a registered image besides its identity.
type ImageSpec struct {
	// Labels are the image's other labels, as found in its metadata.
	Labels map[string]string `json:"labels"`
	// MinResourceSlots is the least a session of this image must request;
	// MaxResourceSlots the most it may (per slot, when both are named).
	MinResourceSlots Slots         `json:"min_resource_slots"`
	MaxResourceSlots Slots         `json:"max_resource_slots"`
	ServicePorts     []ServicePort `json:"service_ports"`
}

func (s ImageSpec) clone() ImageSpec {
	s.Labels = maps.Clone(s.Labels)
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.MinResourceSlots = s.MinResourceSlots.Clone()
	s.MaxResourceSlots = s.MaxResourceSlots.Clone()
	s.ServicePorts = append([]ServicePort{}, s.ServicePorts...)
	return s
}

func (s ImageSpec) equal(o ImageSpec) bool {
	return maps.Equal(s.Labels, o.Labels) && sameLimits(s.MinResourceSlots, o.MinResourceSlots) &&
		sameLimits(s.MaxResourceSlots, o.MaxResourceSlots) && slices.Equal(s.ServicePorts, o.ServicePorts)
}

// normalized validates the spec and returns a copy with its service ports
// sorted by name.
func (s ImageSpec) normalized(p *problems) ImageSpec {
	out := s.clone()
	if len(s.Labels) > maxImageLabels {
		p.bad("labels", "more than %d labels", maxImageLabels)
	}
	for k, v := range s.Labels {
		p.checkToken("labels", k, maxLabelKeyLength)
		p.checkDescription("labels."+k, v)
	}
	out.MinResourceSlots = p.slotLimits("min_resource_slots", s.MinResourceSlots)
	out.MaxResourceSlots = p.slotLimits("max_resource_slots", s.MaxResourceSlots)
	for _, name := range out.MinResourceSlots.Names() {
		if hi, ok := out.MaxResourceSlots[name]; ok && out.MinResourceSlots[name] > hi {
			p.bad("min_resource_slots."+string(name), "%s is more than the maximum %s", out.MinResourceSlots[name], hi)
		}
	}
	if len(s.ServicePorts) > maxServicePorts {
		p.bad("service_ports", "more than %d service ports", maxServicePorts)
	}
	sort.Slice(out.ServicePorts, func(i, j int) bool { return out.ServicePorts[i].Name < out.ServicePorts[j].Name })
	ports := map[int]bool{}
	for i, sp := range out.ServicePorts {
		field := "service_ports." + sp.Name
		p.checkName(field, sp.Name)
		if i > 0 && out.ServicePorts[i-1].Name == sp.Name {
			p.bad(field, "listed twice")
		}
		switch sp.Protocol {
		case "tcp", "http", "preopen":
		default:
			p.bad(field, "unknown protocol %q (tcp, http, preopen)", sp.Protocol)
		}
		switch {
		case sp.Port < 1 || sp.Port > 65535:
			p.bad(field, "port %d is not between 1 and 65535", sp.Port)
		case ports[sp.Port]:
			p.bad(field, "port %d is used twice", sp.Port)
		}
		ports[sp.Port] = true
	}
	return out
}

// ImageChanges are the fields a modification sets; nil leaves a field as
// it is.
type ImageChanges struct {
	Labels           *map[string]string
	MinResourceSlots *Slots
	MaxResourceSlots *Slots
	ServicePorts     *[]ServicePort
}

// NormalizeArchitecture maps the usual aliases to the names agents report
// (amd64 → x86_64, arm64 → aarch64).
func NormalizeArchitecture(arch string) string {
	switch arch {
	case "amd64", "x86-64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return arch
}

// CheckImageReference validates a reference "registry/name:tag" (or
// "registry/name@digest", or both): the registry is a host name (with a
// dot or a port, or "localhost"), the repository is lower case, and a tag
// or a digest is required. It returns a KindInvalid error naming field.
func CheckImageReference(op, field, ref string) error {
	p := &problems{op: op}
	p.checkImageReference(field, ref)
	return p.err()
}

func (p *problems) checkImageReference(field, ref string) {
	p.checkToken(field, ref, MaxImageReferenceLength)
	if ref == "" || len(ref) > MaxImageReferenceLength || !utf8.ValidString(ref) {
		return
	}
	registry, rest, ok := strings.Cut(ref, "/")
	if !ok || registry == "" || (!strings.ContainsAny(registry, ".:") && registry != "localhost") {
		p.bad(field, "must start with a registry host (registry/name:tag, e.g. localhost/python:3.12)")
		return
	}
	name, digest, hasDigest := strings.Cut(rest, "@")
	tag := ""
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name, tag = name[:i], name[i+1:]
		if tag == "" {
			p.bad(field, "empty tag")
			return
		}
	}
	if hasDigest && !strings.Contains(digest, ":") {
		p.bad(field, "a digest is algorithm:hex")
		return
	}
	if tag == "" && !hasDigest {
		p.bad(field, "a tag or a digest is required (registry/name:tag)")
		return
	}
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//") {
		p.bad(field, "empty repository name")
		return
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && !strings.ContainsRune("._-/", r) {
			p.bad(field, "the repository name may only contain lower-case letters, digits, '.', '_', '-' and '/'")
			return
		}
	}
}

func (p *problems) checkArchitecture(field, arch string) {
	p.checkToken(field, arch, maxArchitectureLength)
	for _, r := range arch {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			p.bad(field, "may only contain lower-case letters, digits and '_' (x86_64, aarch64)")
			return
		}
	}
}

// Image is the image aggregate (stream image-<reference>@<architecture>):
// an image sessions may name. It may be forgotten and registered again.
// The zero Image was never registered.
type Image struct {
	stateOf
	forgotten    bool
	reference    string
	architecture string
	spec         ImageSpec
	registeredAt time.Time
	modifiedAt   time.Time
}

func (i *Image) Reference() string       { return i.reference }
func (i *Image) Architecture() string    { return i.architecture }
func (i *Image) Spec() ImageSpec         { return i.spec.clone() }
func (i *Image) RegisteredAt() time.Time { return i.registeredAt }
func (i *Image) ModifiedAt() time.Time   { return i.modifiedAt }

// Forgotten reports whether the image was registered and then forgotten.
func (i *Image) Forgotten() bool { return i.forgotten }

// RehydrateImage folds an image stream's events. Exists reports whether
// the image is registered now.
func RehydrateImage(events []RecordedEvent) (*Image, error) {
	i := &Image{stateOf: stateOf{revision: -1}}
	if err := fold("image.rehydrate", events, i); err != nil {
		return nil, err
	}
	return i, nil
}

func (i *Image) apply(ev Event) error {
	if _, first := ev.(ImageRegistered); first == i.exists {
		if first {
			return createdTwice("image")
		}
		return eventBeforeCreation("image")
	}
	switch e := ev.(type) {
	case ImageRegistered:
		i.exists, i.forgotten = true, false
		i.reference, i.architecture, i.spec = e.Reference, e.Architecture, e.ImageSpec.clone()
		i.registeredAt, i.modifiedAt = e.At, e.At
	case ImageModified:
		i.spec, i.modifiedAt = e.ImageSpec.clone(), e.At
	case ImageForgotten:
		i.exists, i.forgotten, i.modifiedAt = false, true, e.At
	default:
		return foreignEvent(ev, "image")
	}
	return nil
}

// Register records an image (again, if it was forgotten). A registered
// image with that reference and architecture is KindConflict. A spec with
// no service ports takes them from its ServicePortsLabel, when it has one. The
// architecture's aliases are normalised (NormalizeArchitecture) by the
// caller, who names the stream after it.
func (i *Image) Register(reference, architecture string, spec ImageSpec, at time.Time) ([]Event, error) {
	const op = "image.register"
	p := &problems{op: op}
	p.checkImageReference("reference", reference)
	p.checkArchitecture("architecture", architecture)
	if v, ok := spec.Labels[ServicePortsLabel]; ok && len(spec.ServicePorts) == 0 {
		spec.ServicePorts = p.labelServicePorts(v)
	}
	spec = spec.normalized(p)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if i.exists {
		return nil, alreadyExists(op, "image")
	}
	return []Event{ImageRegistered{Reference: reference, Architecture: architecture, ImageSpec: spec, At: at}}, nil
}

// Modify applies the changes: image.modified with every label when any
// changes. Changed labels carrying ServicePortsLabel, with no service
// ports of their own in the changes, set the service ports from it.
func (i *Image) Modify(ch ImageChanges, at time.Time) ([]Event, error) {
	const op = "image.modify"
	p := &problems{op: op}
	next := i.spec.clone()
	set(&next.Labels, ch.Labels)
	set(&next.MinResourceSlots, ch.MinResourceSlots)
	set(&next.MaxResourceSlots, ch.MaxResourceSlots)
	set(&next.ServicePorts, ch.ServicePorts)
	if ch.ServicePorts == nil && ch.Labels != nil {
		if v, ok := (*ch.Labels)[ServicePortsLabel]; ok {
			next.ServicePorts = p.labelServicePorts(v)
		}
	}
	next = next.normalized(p)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if !i.exists {
		return nil, NotFound(op, "image")
	}
	if next.equal(i.spec) {
		return nil, nil
	}
	return []Event{ImageModified{ImageSpec: next, At: at}}, nil
}

// Forget unregisters the image. Forgetting a forgotten image returns no
// events; one never registered is KindNotFound.
func (i *Image) Forget(at time.Time) ([]Event, error) {
	const op = "image.forget"
	switch {
	case at.IsZero():
		return nil, Invalid(op, "at", "must be set")
	case i.forgotten:
		return nil, nil
	case !i.exists:
		return nil, NotFound(op, "image")
	}
	return []Event{ImageForgotten{At: at}}, nil
}
