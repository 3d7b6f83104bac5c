// Package vfolders connects the virtual folder commands to the parts they
// use through ports: Storage adapts the storage port (infra/vfstorage) to
// commands.VFolderStorage, to the vfolder jobs' storage
// (commands/vfolderjobs), to the orphan collector's directories
// (commands/vfolderorphans) and to the forwarder's mount sources
// (infra/dispatch/forwarder); Tenancy implements commands.VFolderTenancy over
// the tenancy read model (projections/tenancy).
package vfolders
