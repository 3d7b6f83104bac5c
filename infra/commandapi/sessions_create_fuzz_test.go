package commandapi

import (
	"errors"
	"testing"

	"github.com/cairnhq/cairn/domain"
)

// FuzzParseCreateSession: whatever the body, parsing never panics, and a
// refusal is KindInvalid with every problem naming its field.
func FuzzParseCreateSession(f *testing.F) {
	for _, seed := range []string{
		`{"image":"busybox:latest","resources":{"cpu":1,"mem":"1g"}}`,
		`{"name":"x","image":"busybox:latest","type":"batch","command":"true","resources":{"cpu":"0.5","mem":1073741824,"cuda.shares":0.25},"env":{"A":"b"},"priority":5,"cluster_size":2,"cluster_mode":"multi-node","project":"p","resource_group":"g"}`,
		`{"resources":{"cuda.device:1g.10gb-mig":1,"gpu":-1,"cpu":"1e3","mem":null}}`,
		`{"cluster_size":-1,"priority":1e40}`,
		`{"image":"nope","bogus":{"deep":[1,2,3]}}`,
		`[]`, `null`, `"x"`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _, err := parseCreateSession(body, func(ref string) (bool, error) { return ref == "busybox:latest", nil })
		if err == nil {
			return
		}
		if !errors.Is(err, domain.ErrInvalid) {
			t.Fatalf("%q: not invalid: %v", body, err)
		}
		var check func(error)
		check = func(err error) {
			if multi, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range multi.Unwrap() {
					check(e)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Field == "" {
				t.Fatalf("%q: a problem without a field: %v", body, err)
			}
		}
		check(err)
	})
}
