package audit

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/projections"
)

// A record concerns the domain of its actor (the user, or the access key
// it claimed, even if refused) and, when what it acted on belongs to a
// domain, that domain too: a domain auditor reads the records of its
// users and those done to its objects, by anyone. The domains are worked
// out when the run is projected, from the creations of the objects that
// came before it in the log (audit_owners), and stored beside the records
// (audit_domains): a record itself never changes, its hash covers it.

// Kinds of audit_owners rows: what an id names.
const (
	ownerUser    = "user"
	ownerKeypair = "keypair"
	ownerSession = "session"
	ownerVFolder = "vfolder"
	ownerToken   = "token"
)

// ownerRef is an object whose domain audit_owners knows.
type ownerRef struct{ kind, id string }

// refsOf are the objects whose domains r concerns, and the domain it
// names directly (a domain's, a project's record), if any.
func refsOf(r audit.Record) (refs []ownerRef, direct string) {
	if r.UserID != "" {
		refs = append(refs, ownerRef{ownerUser, r.UserID})
	}
	if r.AccessKey != "" {
		refs = append(refs, ownerRef{ownerKeypair, r.AccessKey})
	}
	if r.EntityID == "" {
		return refs, ""
	}
	// Entity types are stream kinds for writes and the route's resource
	// for reads (tokens are /v1/auth/tokens/{id}: "auth").
	switch r.EntityType {
	case string(domain.StreamDomain):
		direct = r.EntityID
	case string(domain.StreamProject):
		if d, _, ok := domain.SplitProjectKey(r.EntityID); ok {
			direct = d
		}
	case ownerUser, ownerKeypair, ownerSession, ownerVFolder, ownerToken:
		refs = append(refs, ownerRef{r.EntityType, r.EntityID})
	case "auth":
		refs = append(refs, ownerRef{ownerToken, r.EntityID})
	}
	return refs, direct
}

// idsPerLookup bounds the parameters of one lookup statement.
const idsPerLookup = 200

// domainsOf returns, per domain, the seqs of the records that concern it,
// in seq order.
func (m *ReadModel) domainsOf(ctx context.Context, tx projections.Tx, records []domain.SealedRecord) (map[string][]uint64, error) {
	owners := map[ownerRef]string{}
	var ids []string
	seen := map[string]bool{}
	for _, rec := range records {
		refs, _ := refsOf(rec.Record)
		for _, ref := range refs {
			if !seen[ref.id] {
				seen[ref.id] = true
				ids = append(ids, ref.id)
			}
		}
	}
	for chunk := range slices.Chunk(ids, idsPerLookup) {
		if err := m.lookupOwners(ctx, tx, chunk, owners); err != nil {
			return nil, err
		}
	}
	out := map[string][]uint64{}
	for _, rec := range records {
		refs, direct := refsOf(rec.Record)
		var ds []string
		if direct != "" {
			ds = append(ds, direct)
		}
		for _, ref := range refs {
			if d, ok := owners[ref]; ok && !slices.Contains(ds, d) {
				ds = append(ds, d)
			}
		}
		for _, d := range ds {
			out[d] = append(out[d], rec.Seq)
		}
	}
	return out, nil
}

// lookupOwners adds the domains audit_owners knows of ids to owners.
func (m *ReadModel) lookupOwners(ctx context.Context, tx projections.Tx, ids []string, owners map[ownerRef]string) error {
	var q strings.Builder
	q.WriteString("SELECT kind, id, domain FROM {schema}.audit_owners WHERE id IN (")
	args := make([]any, len(ids))
	for i, id := range ids {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString("$" + strconv.Itoa(i+1))
		args[i] = id
	}
	q.WriteByte(')')
	rows, err := tx.Query(ctx, tx.SQL(q.String()), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ref ownerRef
		var d string
		if err := rows.Scan(&ref.kind, &ref.id, &d); err != nil {
			return err
		}
		owners[ref] = d
	}
	return rows.Err()
}

// encodeSeqs writes ascending seqs as ranges: "3-7,9,12-13".
func encodeSeqs(seqs []uint64) string {
	var b []byte
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, seqs[i], 10)
		if j > i {
			b = append(b, '-')
			b = strconv.AppendUint(b, seqs[j], 10)
		}
		i = j + 1
	}
	return string(b)
}

// seqRange is one range of a decoded seq set, both ends included.
type seqRange struct{ from, to uint64 }

// seqSet is what encodeSeqs wrote, decoded: ascending ranges.
type seqSet []seqRange

// decodeSeqs reads encodeSeqs's form ("" is the empty set).
func decodeSeqs(s string) (seqSet, error) {
	var out seqSet
	if s == "" {
		return out, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		from, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("audit_domains: seqs %q: %w", s, err)
		}
		to := from
		if isRange {
			if to, err = strconv.ParseUint(hi, 10, 64); err != nil {
				return nil, fmt.Errorf("audit_domains: seqs %q: %w", s, err)
			}
		}
		out = append(out, seqRange{from, to})
	}
	return out, nil
}

// has reports whether seq is in the set.
func (s seqSet) has(seq uint64) bool {
	i, _ := slices.BinarySearchFunc(s, seq, func(r seqRange, seq uint64) int {
		switch {
		case r.to < seq:
			return -1
		case r.from > seq:
			return 1
		}
		return 0
	})
	return i < len(s) && s[i].from <= seq && seq <= s[i].to
}
