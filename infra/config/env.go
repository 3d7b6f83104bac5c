// Package config binds command-line flags to CAIRN_* environment variables
// and prints effective configurations with secrets redacted.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// EnvPrefix is the prefix of every environment variable Cairn reads.
const EnvPrefix = "CAIRN_"

// EnvName is the environment variable that sets a flag: --data-dir is
// CAIRN_DATA_DIR.
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// BindEnv sets every flag of fs that was not given on the command line from
// its CAIRN_* environment variable, if set. Flags win over the environment.
// It reports every bad value at once.
func BindEnv(fs *pflag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "help" {
			return
		}
		v, ok := os.LookupEnv(EnvName(f.Name))
		if !ok {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", EnvName(f.Name), v, err))
		}
	})
	return errors.Join(errs...)
}

// AnnotateUsage appends "(env CAIRN_X)" to every flag's usage so --help
// shows both ways of configuring it.
func AnnotateUsage(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || strings.Contains(f.Usage, "(env ") {
			return
		}
		f.Usage += " (env " + EnvName(f.Name) + ")"
	})
}

// RedactDSN hides the password of a URL-shaped DSN for logs.
func RedactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
