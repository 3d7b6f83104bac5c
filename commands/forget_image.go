package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// ForgetImage unregisters an image (superadmins only): new sessions can
// no longer name it; running ones are not affected.
type ForgetImage struct {
	Actor        Principal
	Reference    string
	Architecture string
}

func (ForgetImage) CommandName() string { return "image.forget" }

type forgetImageHandler struct {
	images repository[*domain.Image]
	clock
}

// newForgetImageHandler builds the handler over what it uses.
func newForgetImageHandler(images repository[*domain.Image], now clock) forgetImageHandler {
	return forgetImageHandler{images: images, clock: now}
}

// Handle records image.forgotten; forgetting a forgotten image appends
// nothing.
func (h forgetImageHandler) Handle(ctx context.Context, md Metadata, cmd ForgetImage) (Result, error) {
	const op = "image.forget"
	stream, _, err := imageStream(op, cmd.Actor, cmd.Reference, cmd.Architecture)
	if err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.images.update(ctx, stream, md, func(i *domain.Image) ([]domain.Event, error) {
		return i.Forget(at)
	})
	return result(pos, err)
}
