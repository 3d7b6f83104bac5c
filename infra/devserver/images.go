package devserver

import (
	"context"
	"slices"
	"time"

	"github.com/cairnhq/cairn/agents/runtime/podman"
	"github.com/cairnhq/cairn/infra/bootstrap"
)

// localImagePrefix names the images `cairn dev` registers from Podman's
// store: those this repository's scripts build (scripts/install-podman.sh,
// scripts/build-images.sh).
const localImagePrefix = "localhost/cairn/"

// localImageWait bounds listing them: a slow Podman delays the start by
// this much at most.
const localImageWait = 30 * time.Second

// localImages lists the images named localhost/cairn/* that the local
// agent's Podman has, with their labels and architecture, for the
// bootstrap to register. Without a local agent there is nothing to list;
// a Podman that does not answer is a warning (the agent's own start says
// more), never a failed start.
func (s *server) localImages(ctx context.Context) []bootstrap.LocalImage {
	if s.cfg.NoAgent {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, localImageWait)
	defer cancel()
	rt, err := podman.Connect(ctx, s.cfg.Podman)
	if err != nil {
		s.log.Warn("local images are not registered: Podman does not answer", "podman", s.cfg.Podman, "err", err)
		return nil
	}
	found, err := rt.LocalImages(ctx, localImagePrefix)
	if err != nil {
		s.log.Warn("local images are not registered: listing them failed", "podman", s.cfg.Podman, "err", err)
		return nil
	}
	out := make([]bootstrap.LocalImage, len(found))
	for i, img := range found {
		out[i] = bootstrap.LocalImage{Reference: img.Reference, Architecture: img.Architecture, Labels: img.Labels}
		if !slices.Contains(s.images, img.Reference) {
			s.images = append(s.images, img.Reference)
		}
	}
	return out
}
