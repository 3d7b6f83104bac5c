package main

import (
	"path/filepath"

	"github.com/spf13/cobra"
)

func archiveHeadsPath(dir string) string { return filepath.Join(dir, "heads.ndjson") }

func newAuditArchiveCommand() *cobra.Command { return &cobra.Command{Use: "archive", Hidden: true} }
