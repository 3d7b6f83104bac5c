package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// VFolderIndex is an owner's folder index (stream vfolder-owner-<kind>-<id>):
// the names in use and how many folders exist. Creating, renaming and
// purging go through it, one append per decision with its expected
// revision, so two concurrent creates can neither take the same name nor
// both pass max_vfolder_count.
//
// A claim is written before the folder's own stream (vfolder.created). A
// crash in between leaves a claim whose folder does not exist yet: the
// claim holds everything needed to finish, and a retried create with the
// same folder id completes it (Claim is idempotent for the same id and
// name).
type VFolderIndex struct {
	names map[string]uuid.UUID
	// claimedAt is when each name was claimed.
	claimedAt map[string]time.Time
	revision  int64
}

// RehydrateVFolderIndex folds an owner index stream.
func RehydrateVFolderIndex(events []RecordedEvent) (*VFolderIndex, error) {
	const op = "vfolder.index.rehydrate"
	events, err := foldable(op, events)
	if err != nil {
		return nil, err
	}
	x := &VFolderIndex{names: map[string]uuid.UUID{}, claimedAt: map[string]time.Time{}, revision: -1}
	for _, re := range events {
		switch e := re.Event.(type) {
		case VFolderNameClaimed:
			x.names[e.Name], x.claimedAt[e.Name] = e.FolderID, e.At
		case VFolderNameReleased:
			if x.names[e.Name] == e.FolderID {
				delete(x.names, e.Name)
				delete(x.claimedAt, e.Name)
			}
		default:
			return nil, Errorf(op, KindInternal, "revision %d: %s is not an index event", re.Revision, re.Event.EventType())
		}
		x.revision = re.Revision
	}
	return x, nil
}

// Revision is the index stream's revision (-1: no folder ever).
func (x *VFolderIndex) Revision() int64 { return x.revision }

// Count is the number of folders (named claims) of the owner.
func (x *VFolderIndex) Count() int {
	seen := map[uuid.UUID]bool{}
	for _, id := range x.names {
		seen[id] = true
	}
	return len(seen)
}

// Folders returns the ids of the owner's folders, sorted.
func (x *VFolderIndex) Folders() []uuid.UUID {
	seen := map[uuid.UUID]bool{}
	var ids []uuid.UUID
	for _, id := range x.names {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	return ids
}

// Names returns the names in use and the folder holding each.
func (x *VFolderIndex) Names() map[string]uuid.UUID { return maps.Clone(x.names) }

// Lookup returns the folder holding name.
func (x *VFolderIndex) Lookup(name string) (uuid.UUID, bool) {
	id, ok := x.names[name]
	return id, ok
}

// Claim reserves name for a new folder, within maxCount folders (0: no
// limit, the policy's max_vfolder_count). Claiming a name the same folder
// already holds returns no events (a retried create).
func (x *VFolderIndex) Claim(folderID uuid.UUID, name string, maxCount int, now time.Time) ([]Event, error) {
	const op = "vfolder.create"
	if holder, ok := x.names[name]; ok {
		if holder == folderID {
			return nil, nil
		}
		return nil, Errorf(op, KindConflict, "a folder named %q already exists", name)
	}
	if maxCount > 0 && x.Count() >= maxCount {
		return nil, &Error{Op: op, Kind: KindQuotaExceeded, Field: "max_vfolder_count",
			Message: fmt.Sprintf("the owner already has %d folders, the limit", x.Count())}
	}
	return []Event{VFolderNameClaimed{FolderID: folderID, Name: name, At: now}}, nil
}

// ClaimedAt is when name was claimed (zero when it is free).
func (x *VFolderIndex) ClaimedAt(name string) time.Time { return x.claimedAt[name] }

// TakeOver gives name, held by orphan (a claim whose folder was never
// created and never will be: the caller has closed its stream with
// VFolderCreationAbandoned), to folderID: both in one append.
func (x *VFolderIndex) TakeOver(orphan, folderID uuid.UUID, name string, now time.Time) ([]Event, error) {
	const op = "vfolder.create"
	if x.names[name] != orphan {
		return nil, Errorf(op, KindConflict, "the name %q is not held by folder %s", name, orphan)
	}
	return []Event{
		VFolderNameReleased{FolderID: orphan, Name: name, At: now},
		VFolderNameClaimed{FolderID: folderID, Name: name, At: now},
	}, nil
}

// Rename moves folderID from its name old to name new (both in one append).
func (x *VFolderIndex) Rename(folderID uuid.UUID, old, new string, now time.Time) ([]Event, error) {
	const op = "vfolder.rename"
	if holder, ok := x.names[new]; ok {
		if holder == folderID {
			return nil, nil
		}
		return nil, Errorf(op, KindConflict, "a folder named %q already exists", new)
	}
	evs := []Event{VFolderNameClaimed{FolderID: folderID, Name: new, At: now}}
	if x.names[old] == folderID {
		evs = append(evs, VFolderNameReleased{FolderID: folderID, Name: old, At: now})
	}
	return evs, nil
}

// Release frees the names folderID holds (purged); none is no events.
func (x *VFolderIndex) Release(folderID uuid.UUID, now time.Time) []Event {
	var evs []Event
	for name, id := range x.names {
		if id == folderID {
			evs = append(evs, VFolderNameReleased{FolderID: folderID, Name: name, At: now})
		}
	}
	// Map order is random: keep the events deterministic.
	slices.SortFunc(evs, func(a, b Event) int {
		return strings.Compare(a.(VFolderNameReleased).Name, b.(VFolderNameReleased).Name)
	})
	return evs
}
