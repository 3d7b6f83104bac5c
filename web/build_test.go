package web

import (
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/browsertest"
)

// The committed build is the build of the sources: web/dist is what
// `make webui` makes of web/ui/src with the pinned esbuild.
func TestDistIsTheBuildOfTheSources(t *testing.T) {
	tools := browsertest.Require(t, false)
	tools.Run(t, 2*time.Minute, nil, "build.mjs", "--check")
}
