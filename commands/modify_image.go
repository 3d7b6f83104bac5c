package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// ModifyImage changes a registered image's labels, resource slot bounds
// or service ports (superadmins only).
type ModifyImage struct {
	Actor        Principal
	Reference    string
	Architecture string
	Changes      domain.ImageChanges
}

func (ModifyImage) CommandName() string { return "image.modify" }

type modifyImageHandler struct {
	images repository[*domain.Image]
	clock
}

// newModifyImageHandler builds the handler over what it uses.
func newModifyImageHandler(images repository[*domain.Image], now clock) modifyImageHandler {
	return modifyImageHandler{images: images, clock: now}
}

// Handle applies the changes (domain.Image.Modify).
func (h modifyImageHandler) Handle(ctx context.Context, md Metadata, cmd ModifyImage) (Result, error) {
	const op = "image.modify"
	stream, _, err := imageStream(op, cmd.Actor, cmd.Reference, cmd.Architecture)
	if err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.images.update(ctx, stream, md, func(i *domain.Image) ([]domain.Event, error) {
		return i.Modify(cmd.Changes, at)
	})
	return result(pos, err)
}
