package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/cairnhq/cairn/domain/audit"
)

// signedAnchors verifies the signed heads of --heads (and of the
// archives' heads files, when --head-keys is given) and returns them as
// anchors.
func (o auditReplayOptions) signedAnchors() ([]audit.Head, error) {
	if (len(o.heads) > 0 || o.headKeys != "") && !o.verify {
		return nil, errors.New("--heads and --head-keys verify: they need --verify")
	}
	if len(o.heads) > 0 && o.headKeys == "" {
		return nil, errors.New("--heads needs --head-keys: the keys file the heads' signatures are checked with")
	}
	if o.headKeys == "" {
		return nil, nil
	}
	kf, err := os.Open(o.headKeys)
	if err != nil {
		return nil, fmt.Errorf("--head-keys: %w", err)
	}
	keys, err := audit.ParseKeyring(kf)
	kf.Close()
	if err != nil {
		return nil, fmt.Errorf("--head-keys %s: %w", o.headKeys, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("--head-keys %s: lists no key", o.headKeys)
	}
	var files []string
	for _, dir := range o.archives {
		files = append(files, archiveHeadsPath(dir))
	}
	files = append(files, o.heads...)
	if len(files) == 0 {
		return nil, errors.New("--head-keys needs --heads or --archive: the signed heads to verify")
	}
	var anchors []audit.Head
	seen := map[uint64]audit.Hash{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("signed heads: %w", err)
		}
		got, err := audit.VerifyHeads(f, keys)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("the audit trail is not verified: %s: %w", name, err)
		}
		for _, h := range got {
			if prev, ok := seen[h.Seq]; ok && prev != h.Hash {
				return nil, fmt.Errorf("the audit trail is not verified: %s: a signed head names hash %s for seq %d, another file's names %s", name, h.Hash, h.Seq, prev)
			}
			seen[h.Seq] = h.Hash
		}
		anchors = append(anchors, got...)
	}
	return anchors, nil
}
