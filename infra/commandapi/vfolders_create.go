package commandapi

import (
	"net/http"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opCreateVFolder = "vfolder.create"

// createVFolderRequest is the body of POST /v1/vfolders.
type createVFolderRequest struct {
	// ID is optional: a client retrying a create whose outcome it does not
	// know sends the id of its first try, which completes that one.
	ID         *uuid.UUID `json:"id"`
	Name       string     `json:"name"`
	Host       string     `json:"host"`
	UsageMode  string     `json:"usage_mode"`
	Permission string     `json:"permission"`
	Quota      int64      `json:"quota"`
	Cloneable  bool       `json:"cloneable"`
	// Project makes a project folder (admins only) of that project of the
	// caller's domain.
	Project string `json:"project"`
}

// spec is the request as a folder spec (owner: the caller, or the project).
func (r createVFolderRequest) spec(who caller, defaultHost string) domain.VFolderSpec {
	s := domain.VFolderSpec{
		Name: r.Name, Host: r.Host, UsageMode: domain.VFolderUsageMode(r.UsageMode),
		Permission: domain.VFolderPermission(r.Permission), Quota: r.Quota, Cloneable: r.Cloneable,
	}
	if r.ID != nil {
		s.ID = *r.ID
	}
	if s.Host == "" {
		s.Host = defaultHost
	}
	if r.Project != "" {
		s.Owner = commands.ProjectFolderOwner(who.Domain, r.Project)
	}
	return s
}

// createVFolder handles POST /v1/vfolders: 201 with the folder's id and
// the position of its events.
func (a *api) createVFolder(c *fiber.Ctx) error {
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	var req createVFolderRequest
	if err := decodeBody(c, opCreateVFolder, &req); err != nil {
		return err
	}
	res, err := a.Commands.CreateVFolder.Handle(c.UserContext(), metadata(c, who),
		commands.CreateVFolder{Actor: actor(who), Spec: req.spec(who, a.defaultHost())})
	if err == nil {
		c.Location("/v1/vfolders/" + res.FolderID.String())
	}
	return folderWrittenAnswer(c, http.StatusCreated, res, err)
}

// defaultHost is VFolderDeps.DefaultHost, or the first configured host.
func (a *api) defaultHost() string {
	if a.VFolders.DefaultHost != "" {
		return a.VFolders.DefaultHost
	}
	if hosts := a.VFolders.Storage.Hosts(); len(hosts) > 0 {
		return hosts[0].Name
	}
	return ""
}
