package readapi

import (
	"encoding/base64"
	"strings"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// An image is identified by its reference and architecture; both go into
// its id, "<reference>@<architecture>" in unpadded base64url, so that the
// slashes and colons of a reference never meet a URL path.

// ImageID is the id of an image in routes.
func ImageID(reference, architecture string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(reference + "@" + architecture))
}

// ParseImageID splits an id; a malformed one is not found.
func ParseImageID(op, id string) (reference, architecture string, err error) {
	raw, derr := base64.RawURLEncoding.DecodeString(id)
	s := string(raw)
	i := strings.LastIndexByte(s, '@')
	if derr != nil || i <= 0 || i == len(s)-1 {
		return "", "", domain.NotFound(op, "image")
	}
	return s[:i], s[i+1:], nil
}

// imageView is an image on the wire: the read model's, with its id.
type imageView struct {
	ID string `json:"id"`
	tenancy.Image
}

func viewImage(i tenancy.Image) imageView {
	return imageView{ID: ImageID(i.Reference, i.Architecture), Image: i}
}

// DefaultArchitecture is the architecture of an image registered without
// one.
const DefaultArchitecture = "x86_64"
