package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// RegisterImage registers an image for an architecture (superadmins
// only): sessions may then name it. Architecture aliases (amd64, arm64)
// are normalised.
type RegisterImage struct {
	Actor        Principal
	Reference    string
	Architecture string
	Spec         domain.ImageSpec
}

func (RegisterImage) CommandName() string { return "image.register" }

type registerImageHandler struct {
	images repository[*domain.Image]
	clock
}

// newRegisterImageHandler builds the handler over what it uses.
func newRegisterImageHandler(images repository[*domain.Image], now clock) registerImageHandler {
	return registerImageHandler{images: images, clock: now}
}

// Handle creates (or, for a forgotten image, continues) the image's
// stream; a registered image of that reference and architecture is
// KindConflict.
func (h registerImageHandler) Handle(ctx context.Context, md Metadata, cmd RegisterImage) (Result, error) {
	const op = "image.register"
	stream, arch, err := imageStream(op, cmd.Actor, cmd.Reference, cmd.Architecture)
	if err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.images.update(ctx, stream, md, func(i *domain.Image) ([]domain.Event, error) {
		return i.Register(cmd.Reference, arch, cmd.Spec, at)
	})
	return result(pos, err)
}

// imageStream authorizes the actor on images (superadmins only),
// validates the image's identity and returns its stream and normalised
// architecture.
func imageStream(op string, actor Principal, reference, architecture string) (domain.Stream, string, error) {
	if err := authorizeGlobal(op, actor); err != nil {
		return domain.Stream{}, "", err
	}
	arch := domain.NormalizeArchitecture(architecture)
	if err := domain.CheckImageReference(op, "reference", reference); err != nil {
		return domain.Stream{}, "", err
	}
	if err := domain.CheckName(op, "architecture", arch); err != nil {
		return domain.Stream{}, "", err
	}
	return domain.ImageStream(reference, arch), arch, nil
}
