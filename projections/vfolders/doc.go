// Package vfolders is the read model of virtual folders: every folder with
// its owner, status and settings (vfolders), who it is shared with
// (vfolder_users: members of user folders through accepted invitations,
// and per-user permission overrides of project folders), and the
// invitations sent and received (vfolder_invitations), kept up to date by
// a projections.Projector from the vfolder.* events of folder streams.
// Owner index streams (names) are the write side's and are not projected.
//
// Visible returns, in one query, the folders a viewer sees — its own, the
// ones shared with it, its projects', and for admins and monitors their
// domain's (or all, for superadmins) — each with the viewer's effective
// permission, computed exactly as domain.VFolder.EffectivePermission does.
//
// A folder's usage (bytes and files) is measured on its storage host, not
// recorded as events; it is not in this read model (the HTTP layer asks
// the storage port).
package vfolders
