package audit

import (
	"crypto/sha256"
	"encoding/binary"
)

// CurrentVersion is the encoding version Seal writes.
const CurrentVersion = 1

// tagV1 opens every version-1 encoding: it separates audit hashes from any
// other SHA-256 use and names the version.
const tagV1 = "cairn.audit.v1\x00"

// appendV1 appends the version-1 canonical encoding of r to b:
//
//	"cairn.audit.v1\x00"
//	prev_hash                      32 bytes
//	seq                            uint64, big-endian
//	time: unix seconds, nanos      int64, uint32, big-endian
//	status                         int64, big-endian
//	duration (ns)                  int64, big-endian
//	outcome, action, entity_type, entity_id, user_id, access_key,
//	acting_as, client_ip, request_id
//	                               each: uint32 big-endian byte length, then the bytes
//
// Fixed-width numbers in a fixed order and length-prefixed strings make the
// encoding injective: two different records never encode alike.
func appendV1(b []byte, r *Record) []byte {
	b = append(b, tagV1...)
	b = append(b, r.PrevHash[:]...)
	b = binary.BigEndian.AppendUint64(b, r.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Time.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(r.Time.Nanosecond()))
	b = binary.BigEndian.AppendUint64(b, uint64(int64(r.Status)))
	b = binary.BigEndian.AppendUint64(b, uint64(r.Duration))
	for _, s := range r.strings() {
		b = binary.BigEndian.AppendUint32(b, uint32(len(*s)))
		b = append(b, *s...)
	}
	return b
}

// hashV1 is SHA-256 of the version-1 encoding of r.
func hashV1(r *Record) Hash {
	var buf [512]byte // most records fit: no allocation
	return sha256.Sum256(appendV1(buf[:0], r))
}

// computeHash returns r's hash under its Version, ok false for a version
// this code does not know.
func computeHash(r *Record) (Hash, bool) {
	switch r.Version {
	case 1:
		return hashV1(r), true
	}
	return Hash{}, false
}
