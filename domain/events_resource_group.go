package domain

import "time"

// Wire names of the events of resource groups (resource-group-<name>) and
// images (image-<reference>@<architecture>).
const (
	TypeResourceGroupCreated       = "resource-group.created"
	TypeResourceGroupModified      = "resource-group.modified"
	TypeResourceGroupAccessGranted = "resource-group.access-granted"
	TypeResourceGroupAccessRevoked = "resource-group.access-revoked"

	TypeImageRegistered = "image.registered"
	TypeImageModified   = "image.modified"
	TypeImageForgotten  = "image.forgotten"
)

// ResourceGroupCreated: a resource group exists with these settings and
// an empty access list.
type ResourceGroupCreated struct {
	Name string `json:"name"`
	ResourceGroupSpec
	At time.Time `json:"at"`
}

// ResourceGroupModified: the group's settings are now these (all of them).
type ResourceGroupModified struct {
	ResourceGroupSpec
	At time.Time `json:"at"`
}

// ResourceGroupAccessGranted: sessions of the grantee may use the group.
type ResourceGroupAccessGranted struct {
	Grantee Grantee   `json:"grantee"`
	At      time.Time `json:"at"`
}

// ResourceGroupAccessRevoked: the grantee's access is gone.
type ResourceGroupAccessRevoked struct {
	Grantee Grantee   `json:"grantee"`
	At      time.Time `json:"at"`
}

// ImageRegistered: an image may be named by sessions (again, after
// image.forgotten).
type ImageRegistered struct {
	Reference    string `json:"reference"`
	Architecture string `json:"architecture"`
	ImageSpec
	At time.Time `json:"at"`
}

// ImageModified: the image's labels are now these (all of them).
type ImageModified struct {
	ImageSpec
	At time.Time `json:"at"`
}

// ImageForgotten: the image is no longer registered; sessions that use it
// keep running.
type ImageForgotten struct {
	At time.Time `json:"at"`
}

func (ResourceGroupCreated) EventType() string       { return TypeResourceGroupCreated }
func (ResourceGroupModified) EventType() string      { return TypeResourceGroupModified }
func (ResourceGroupAccessGranted) EventType() string { return TypeResourceGroupAccessGranted }
func (ResourceGroupAccessRevoked) EventType() string { return TypeResourceGroupAccessRevoked }
func (ImageRegistered) EventType() string            { return TypeImageRegistered }
func (ImageModified) EventType() string              { return TypeImageModified }
func (ImageForgotten) EventType() string             { return TypeImageForgotten }
