package localfs

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Defaults applied by Config.WithDefaults to zero fields.
const (
	// DefaultUsageTTL is how long a measured usage is trusted before the
	// next Usage call walks the folder again. Writes through the port
	// update it at once; the lifetime bounds how stale it is for writes
	// made by sessions that mount the folder.
	DefaultUsageTTL = time.Minute
	// DefaultStagingMaxAge is the age (since its last write) after which a
	// staging file is an upload that died with its process, removed by the
	// next walk of its folder.
	DefaultStagingMaxAge = 24 * time.Hour
	// DefaultUploadTTL is how long a resumable upload lives without
	// receiving a byte before it expires.
	DefaultUploadTTL = 24 * time.Hour
)

// HostSpec is one storage host: a name and the directory that backs it.
// Its text form is "name:path", e.g. "local:/var/lib/cairn/vfolders"; the
// path may be anything mounted there (a local disk, NFS, CephFS).
type HostSpec struct {
	Name string
	Path string
}

func (h HostSpec) String() string { return h.Name + ":" + h.Path }

// ParseHost parses "name:path". The path is everything after the first
// colon; Config.Validate checks both parts.
func ParseHost(s string) (HostSpec, error) {
	name, path, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return HostSpec{}, fmt.Errorf("storage host %q: want name:path, e.g. local:/var/lib/cairn/vfolders", s)
	}
	return HostSpec{Name: name, Path: path}, nil
}

// Hosts is a list of storage hosts; as a flag (pflag.Value) it takes a
// comma-separated list of name:path and may be repeated.
type Hosts []HostSpec

// ParseHosts parses a comma-separated list of name:path, reporting every
// malformed entry at once.
func ParseHosts(list string) (Hosts, error) {
	var hs Hosts
	return hs, hs.Set(list)
}

func (hs *Hosts) String() string {
	parts := make([]string, len(*hs))
	for i, h := range *hs {
		parts[i] = h.String()
	}
	return strings.Join(parts, ",")
}

// Set appends the hosts of a comma-separated list.
func (hs *Hosts) Set(list string) error {
	var errs []error
	for part := range strings.SplitSeq(list, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		h, err := ParseHost(part)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*hs = append(*hs, h)
	}
	return errors.Join(errs...)
}

// Type names the flag's value type in --help.
func (hs *Hosts) Type() string { return "name:path,..." }

// Config configures the local file system backend. Hosts is required;
// every other zero field takes its default.
type Config struct {
	// Hosts are the storage hosts, each a directory.
	Hosts Hosts
	// UsageTTL is how long a measured usage is trusted (default
	// DefaultUsageTTL).
	UsageTTL time.Duration
	// StagingMaxAge is when a staging file is abandoned (default
	// DefaultStagingMaxAge). It must exceed the longest pause in an upload.
	StagingMaxAge time.Duration
	// UploadTTL is how long a resumable upload lives after its last byte
	// (default DefaultUploadTTL); then it expires, its bytes are removed
	// and its reservation of the folder's quota released.
	UploadTTL time.Duration
	// CreateHostDirs makes missing host directories at Open (for
	// `cairn dev`). Off by default: a missing directory usually means a
	// network file system that is not mounted, and writing folders under
	// its mount point would fill the wrong disk.
	CreateHostDirs bool
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.UsageTTL == 0 {
		c.UsageTTL = DefaultUsageTTL
	}
	if c.StagingMaxAge == 0 {
		c.StagingMaxAge = DefaultStagingMaxAge
	}
	if c.UploadTTL == 0 {
		c.UploadTTL = DefaultUploadTTL
	}
	return c
}

var hostName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.Hosts) == 0 {
		add("hosts: at least one is needed (name:path, e.g. local:/var/lib/cairn/vfolders)")
	}
	names := make(map[string]bool, len(c.Hosts))
	var paths []string
	for _, h := range c.Hosts {
		if !hostName.MatchString(h.Name) {
			add("host %q: the name must be 1 to 63 of a-z, 0-9, '.', '_', '-', starting with a letter or digit", h.String())
		} else if names[h.Name] {
			add("host %q: the name is used twice", h.String())
		}
		names[h.Name] = true
		switch {
		case !filepath.IsAbs(h.Path):
			add("host %q: the path must be absolute", h.String())
			continue
		case filepath.Clean(h.Path) != h.Path:
			add("host %q: the path must be clean (%s)", h.String(), filepath.Clean(h.Path))
			continue
		case h.Path == "/":
			add("host %q: the path must not be the file system's root", h.String())
			continue
		}
		for _, p := range paths {
			if within(h.Path, p) || within(p, h.Path) {
				add("host %q: the path overlaps another host's %s", h.String(), p)
			}
		}
		paths = append(paths, h.Path)
	}
	if c.UsageTTL < 0 {
		add("usage TTL %s: must not be negative", c.UsageTTL)
	}
	if c.StagingMaxAge < 0 {
		add("staging max age %s: must not be negative", c.StagingMaxAge)
	}
	if c.UploadTTL < 0 {
		add("upload TTL %s: must not be negative", c.UploadTTL)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("vfolder storage: invalid config: %w", err)
	}
	return nil
}

// within reports whether path is dir or below it (both clean and absolute).
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// LogValue is the effective configuration, for the start-up log line.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("hosts", c.Hosts.String()),
		slog.Duration("usage_ttl", c.UsageTTL),
		slog.Duration("staging_max_age", c.StagingMaxAge),
		slog.Duration("upload_ttl", c.UploadTTL),
		slog.Bool("create_host_dirs", c.CreateHostDirs),
	)
}
