package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// FileFlag is the flag (and CAIRN_CONFIG) naming a configuration file.
const FileFlag = "config"

// BindFile sets every flag of fs that is still unset (neither on the
// command line nor in the environment: call BindEnv first) from the YAML
// file at path: a mapping of flag names, without the dashes, to values.
// A list sets a repeatable flag once per element.
//
//	listen: 0.0.0.0:8080
//	store: postgres://cairn@db/cairn
//	image:
//	  - localhost/team/pytorch:2.4
//	  - localhost/team/jax:0.4
//
// A key that is not a flag of the command is an error (a typo would
// otherwise be silently ignored), as is a file that others than its owner
// may write (whoever changes it configures the process). Every problem is
// reported at once.
func BindFile(fs *pflag.FlagSet, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("config file %s: mode %v lets others change it; chmod go-w %s", path, info.Mode().Perm(), path)
	}
	var values map[string]any
	dec := yaml.NewDecoder(f)
	if err := dec.Decode(&values); err != nil && !errors.Is(err, io.EOF) { // io.EOF: an empty file
		return fmt.Errorf("config file %s: %w", path, err)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	for _, k := range keys {
		fl := fs.Lookup(k)
		switch {
		case fl == nil || k == "help" || k == FileFlag:
			errs = append(errs, fmt.Errorf("config file %s: %q is not a flag of this command (see --help)", path, k))
			continue
		case fl.Changed:
			continue // the command line or the environment wins
		}
		var items []any
		switch v := values[k].(type) {
		case []any:
			items = v
		case map[string]any:
			errs = append(errs, fmt.Errorf("config file %s: %s: want a value or a list, not a mapping", path, k))
			continue
		default:
			items = []any{v}
		}
		for _, item := range items {
			if item == nil {
				errs = append(errs, fmt.Errorf("config file %s: %s: empty value", path, k))
				continue
			}
			s := fmt.Sprint(item)
			if err := fs.Set(k, s); err != nil {
				errs = append(errs, fmt.Errorf("config file %s: %s: %q: %w", path, k, s, err))
			}
		}
	}
	return errors.Join(errs...)
}
