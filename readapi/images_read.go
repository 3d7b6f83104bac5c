package readapi

import (
	"github.com/gofiber/fiber/v2"
)

const (
	opListImages = "image.list"
	opGetImage   = "image.get"
)

// listImages handles GET /v1/images: the image registry, which every
// caller may read (sessions must name one of these).
func (a *api) listImages(c *fiber.Ctx) error {
	if _, err := a.Reading(c, opListImages); err != nil {
		return err
	}
	list, err := a.Tenancy.ListImages(c.UserContext())
	if err != nil {
		return err
	}
	out := items[imageView]{Items: make([]imageView, len(list))}
	for i, img := range list {
		out.Items[i] = viewImage(img)
	}
	return c.JSON(out)
}

// getImage handles GET /v1/images/{id}.
func (a *api) getImage(c *fiber.Ctx) error {
	if _, err := a.Reading(c, opGetImage); err != nil {
		return err
	}
	ref, arch, err := ParseImageID(opGetImage, c.Params("id"))
	if err != nil {
		return err
	}
	img, err := a.Tenancy.GetImage(c.UserContext(), ref, arch)
	if err != nil {
		return err
	}
	return c.JSON(viewImage(img))
}
