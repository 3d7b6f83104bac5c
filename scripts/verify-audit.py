#!/usr/bin/env python3
"""verify-audit.py: verify an export of Cairn's audit trail without Cairn.

An independent verifier of the hash chain and the signed heads described
in docs/audit.md, written in Python with the standard library only, so an
auditor can check an export with code they can read in one sitting rather
than with the Go code that wrote the trail.

It recomputes every full record's v1 hash from its JSON fields, checks
that seqs are dense from 1 and that every prev_hash is the hash of the
record before (elided records included), checks each signed head's
ed25519 signature against a public keys file, and that the export holds
each head's seq with exactly that hash (a truncated tail or a re-hashed
suffix is caught against a head). Problems are named as the Go verifier
names them (altered, removed, reordered, duplicated, truncated,
unsupported-version), with the first bad seq.

Exit status: 0 verified, 1 a problem found, 2 a usage error.
"""

import argparse
import base64
import codecs
import hashlib
import json
import os
import re
import sys

# ---------------------------------------------------------------------------
# ed25519 signature verification (RFC 8032, section 5.1), on Python's ints.
# Points are in extended coordinates (X, Y, Z, T) with x = X/Z, y = Y/Z and
# x*y = T/Z, on the twisted Edwards curve -x^2 + y^2 = 1 + d*x^2*y^2.

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493  # order of the base point
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)  # a square root of -1 mod P
IDENTITY = (0, 1, 1, 0)


def _add(p1, p2):
    """Sum of two points (the unified formula: it doubles too)."""
    x1, y1, z1, t1 = p1
    x2, y2, z2, t2 = p2
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = 2 * D * t1 * t2 % P
    dd = 2 * z1 * z2 % P
    e, f, g, h = b - a, dd - c, dd + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _mul(k, point):
    """[k]point by double and add (verification handles public data only)."""
    result = IDENTITY
    while k:
        if k & 1:
            result = _add(result, point)
        point = _add(point, point)
        k >>= 1
    return result


def _encode(point):
    """The 32-byte encoding: y little-endian, the sign of x in the top bit."""
    x, y, z, _ = point
    zi = pow(z, P - 2, P)
    x, y = x * zi % P, y * zi % P
    return (y | (x & 1) << 255).to_bytes(32, "little")


def _decode(b):
    """The point a 32-byte encoding names, None if it names none (or is not canonical)."""
    if len(b) != 32:
        return None
    y = int.from_bytes(b, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    x = pow(x2, (P + 3) // 8, P)  # a square root of x2, or of -x2
    if (x * x - x2) % P:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P:
        return None  # x2 is not a square: no point has this y
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = P - x
    return (x, y, 1, x * y % P)


BASE = _decode((4 * pow(5, P - 2, P) % P).to_bytes(32, "little"))


def public_key_from_seed(seed):
    """The public key of a 32-byte private seed (for the self-test only)."""
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little") & ((1 << 254) - 8) | (1 << 254)
    return _encode(_mul(a, BASE))


def ed25519_verify(public, message, signature):
    """True if signature (R || S) is public's signature of message:
    S < L and [S]B - [k]A encodes to R, k = SHA-512(R || A || M) mod L."""
    if len(public) != 32 or len(signature) != 64:
        return False
    a = _decode(public)
    if a is None:
        return False
    r, s = signature[:32], int.from_bytes(signature[32:], "little")
    if s >= L:
        return False  # not canonical: the same signature spelt another way
    k = int.from_bytes(hashlib.sha512(r + public + message).digest(), "little") % L
    x, y, z, t = _mul(k, a)
    return _encode(_add(_mul(s, BASE), (-x % P, y, z, -t % P))) == r


# ---------------------------------------------------------------------------
# Records: their JSON (read as Go's encoding/json reads it) and v1 encoding.

TAG_V1 = b"cairn.audit.v1\x00"
HEAD_TAG = b"cairn.audit.head.v1\x00"
ZERO_HASH = bytes(32)
GO_ZERO_TIME = (-62135596800, 0)  # Go's zero time.Time: a record without a time
INT64 = (-(2**63), 2**63 - 1)
UINT64 = (0, 2**64 - 1)

# The record's JSON fields: name -> kind. Strings in encoding order.
STRINGS = ["outcome", "action", "entity_type", "entity_id", "user_id", "access_key", "acting_as", "client_ip", "request_id"]
FIELDS = {"v": INT64, "seq": UINT64, "status": INT64, "duration_ns": INT64, "time": "time",
          "prev_hash": "hash", "hash": "hash", "elided": "bool"}
FIELDS.update({name: "string" for name in STRINGS})
ELIDED = ("seq", "prev_hash", "hash", "elided")


class Malformed(ValueError):
    """Input that is not what the format says (a line that is no record, a bad head)."""


class ChainProblem(Exception):
    """What the chain verification found: problem, seq, position, expected seq, detail."""

    def __init__(self, problem, seq, index, expected, detail):
        super().__init__(problem)
        self.problem, self.seq, self.index, self.expected, self.detail = problem, seq, index, expected, detail

    def __str__(self):  # the words of Go's audit.ChainError
        if self.index < 0:
            return "audit chain: %s: %s" % (self.problem, self.detail)
        return "audit chain: %s at record seq %d (position %d, expected seq %d): %s" % (
            self.problem, self.seq, self.index, self.expected, self.detail)


def _per_byte(err):
    """Each invalid UTF-8 byte becomes one U+FFFD, as Go decodes it."""
    return ("\ufffd" * (err.end - err.start), err.end)


codecs.register_error("cairn-per-byte", _per_byte)

_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})", re.ASCII)


def _days_from_civil(y, m, d):
    """Days from 1970-01-01 to a proleptic Gregorian date (any year)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def parse_time(text):
    """An RFC 3339 time as (Unix seconds, nanoseconds): the numbers encoded."""
    m = _TIME.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise Malformed("time %r is not an RFC 3339 time" % (text,))
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    month_days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    if not (1 <= mo <= 12 and 1 <= d <= month_days[mo - 1] and h < 24 and mi < 60 and s < 60):
        raise Malformed("time %r is out of range" % text)
    nanos = int((m.group(7) or "")[:9].ljust(9, "0"))
    offset, zone = 0, m.group(8)
    if zone != "Z":
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh >= 24 or om >= 60:
            raise Malformed("time %r has an offset out of range" % text)
        offset = (oh * 3600 + om * 60) * (-1 if zone[0] == "-" else 1)
    return _days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset, nanos


def parse_hash(text, what):
    if not isinstance(text, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raise Malformed("%s %r is not 64 hex digits" % (what, text))
    return bytes.fromhex(text)


def _field(key):
    """The record field a JSON key sets: its exact name, else one equal but for case."""
    if key in FIELDS:
        return key
    for name in FIELDS:
        if len(name) == len(key) and all(a == b or a.casefold() == b.casefold() for a, b in zip(name, key)):
            return name
    return None


class _Pairs(list):
    """A JSON object's (key, value) pairs in order (a later duplicate wins, as in Go)."""


def _no_constant(name):
    raise ValueError("%s is not JSON" % name)


def _loads(text):
    """Standard JSON only (no NaN or Infinity), objects as _Pairs, floats marked unusable."""
    return json.loads(text, object_pairs_hook=_Pairs, parse_float=lambda s: float("nan"), parse_constant=_no_constant)


def decode_record(line):
    """A record from its JSON line, every field at its zero value unless set."""
    try:
        pairs = _loads(line)
    except ValueError as e:
        raise Malformed("not JSON: %s" % e)
    if not isinstance(pairs, _Pairs):
        raise Malformed("not a JSON object")
    rec = {"v": 0, "seq": 0, "status": 0, "duration_ns": 0, "time": GO_ZERO_TIME,
           "prev_hash": ZERO_HASH, "hash": ZERO_HASH, "elided": False}
    rec.update({name: "" for name in STRINGS})
    last = {}
    for key, value in pairs:
        name = _field(key)
        if name is not None:
            last[name] = value
        if name == "elided" and value is None:
            rec[name] = False  # a null elided is a full record's
        if name is None or value is None:
            continue  # unknown fields (source_position...) are not hashed; null leaves the zero value
        kind = FIELDS[name]
        if kind == "string":
            if not isinstance(value, str):
                raise Malformed("%s is not a string" % name)
            rec[name] = re.sub("[\ud800-\udfff]", "\ufffd", value)  # a lone surrogate escape
        elif kind == "time":
            rec[name] = parse_time(value)
        elif kind == "hash":
            rec[name] = parse_hash(value, name)
        elif kind == "bool":
            if not isinstance(value, bool):
                raise Malformed("%s is not true or false" % name)
            rec[name] = value
        elif type(value) is not int or not kind[0] <= value <= kind[1]:
            raise Malformed("%s %r is not an integer in range" % (name, value))
        else:
            rec[name] = value
    if rec["elided"]:
        # Nothing unverifiable may ride along with an elided record: exactly these members.
        names = {key for key, _ in pairs}
        if (len(names) != len(ELIDED) or any(_field(k) not in ELIDED for k in names)
                or any(last.get(k) is None for k in ELIDED)):
            raise Malformed("an elided record has exactly the members seq, prev_hash, hash and elided")
    return rec


def encode_v1(rec):
    """The version-1 canonical encoding of a record (docs/audit.md)."""
    seconds, nanos = rec["time"]
    out = [TAG_V1, rec["prev_hash"], rec["seq"].to_bytes(8, "big"), (seconds % 2**64).to_bytes(8, "big"),
           nanos.to_bytes(4, "big"), (rec["status"] % 2**64).to_bytes(8, "big"), (rec["duration_ns"] % 2**64).to_bytes(8, "big")]
    for name in STRINGS:
        b = rec[name].encode("utf-8")
        out += [len(b).to_bytes(4, "big"), b]
    return b"".join(out)


# ---------------------------------------------------------------------------
# The chain: the rules of Go's audit.Verifier, record by record.

class Verifier:
    def __init__(self, anchors):
        self.head = (0, ZERO_HASH)
        self.index, self.held, self.held_at = 0, None, -1
        self.anchors = {seq: h for seq, h in anchors if seq > 0}
        self.max_seq = max(self.anchors, default=0)
        self.elided = 0
        self.err = None  # a problem found before any record, raised at the first
        if any(seq == 0 and h != ZERO_HASH for seq, h in anchors):
            self.err = ChainProblem("altered", 0, -1, 1, "the start head differs from an anchor at the same seq")

    def add(self, rec):
        if self.err:
            raise self.err
        at, self.index = self.index, self.index + 1
        expected = self.head[0] + 1
        seq, h = rec["seq"], rec["hash"]

        def fail(problem, bad_seq, index, detail):
            raise ChainProblem(problem, bad_seq, index, expected, detail)

        if self.held_at >= 0:  # an earlier record jumped ahead: does one it skipped come later?
            held = self.held[0]
            if expected <= seq < held:
                fail("reordered", held, self.held_at, "record %d appears before record %d" % (held, seq))
            return
        if not rec["elided"]:  # an elided record's content is not here: only its links are checked
            if rec["v"] != 1:
                fail("unsupported-version", seq, at, "encoding version %d" % rec["v"])
            if hashlib.sha256(encode_v1(rec)).digest() != h:
                fail("altered", seq, at, "its content does not match its hash")
        if seq > expected:
            self.held, self.held_at = (seq, h), at
            return
        if seq < expected:
            if (seq, h) == self.head:
                fail("duplicated", seq, at, "record %d appears twice" % seq)
            fail("reordered", seq, at, "record %d appears after record %d" % (seq, self.head[0]))
        if rec["prev_hash"] != self.head[1]:
            fail("altered", seq, at, "its prev_hash does not match the hash of record %d: one of the two was rewritten" % self.head[0])
        if seq in self.anchors and self.anchors[seq] != h:
            fail("altered", seq, at, "its hash differs from the anchored head %s" % self.anchors[seq].hex())
        self.head = (seq, h)
        self.elided += rec["elided"]

    def finish(self):
        if self.err:
            raise self.err
        expected = self.head[0] + 1
        if self.held_at >= 0:
            held = self.held[0]
            gap = "record %d" % expected if expected == held - 1 else "records %d to %d" % (expected, held - 1)
            raise ChainProblem("removed", held, self.held_at, expected, "%s missing before record %d" % (gap, held))
        if self.max_seq > self.head[0]:
            raise ChainProblem("truncated", self.max_seq, -1, expected,
                               "the chain ends at record %d but record %d was anchored" % (self.head[0], self.max_seq))
        return self.head


# ---------------------------------------------------------------------------
# Signed heads and the public keys that verify them.

def key_id(public):
    return hashlib.sha256(public).hexdigest()[:16]


def _b64(text, size, what):
    try:
        b = base64.b64decode(text, validate=True)
    except (ValueError, TypeError):
        b = None
    if b is None or len(b) != size or base64.b64encode(b).decode() != text:
        raise Malformed("%s is not standard base64 of %d bytes" % (what, size))
    return b


def load_keys(lines):
    """Key id -> public key, from the lines of a keys file: ed25519 <base64> [comment]."""
    keys = {}
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if fields[0] != "ed25519" or len(fields) < 2:
            raise Malformed("keys line %d: want 'ed25519 <base64 public key> [comment]'" % n)
        public = _b64(fields[1], 32, "keys line %d's key" % n)
        keys[key_id(public)] = public
    return keys


def head_message(seq, h, seconds, nanos):
    """The bytes a head's signature covers."""
    return HEAD_TAG + seq.to_bytes(8, "big") + h + (seconds % 2**64).to_bytes(8, "big") + nanos.to_bytes(4, "big")


HEAD_FIELDS = ("v", "seq", "hash", "time", "key_id", "sig")


def parse_head(line):
    """A signed head line's fields: every one required, no other allowed."""
    try:
        pairs = _loads(line)
    except ValueError as e:
        raise Malformed("not JSON: %s" % e)
    if not isinstance(pairs, _Pairs):
        raise Malformed("not a JSON object")
    head = {}
    for key, value in pairs:
        name = next((f for f in HEAD_FIELDS if f == key), None) or next(
            (f for f in HEAD_FIELDS if len(f) == len(key) and f.casefold() == key.casefold()), None)
        if name is None:
            raise Malformed("unknown member %r" % key)
        head[name] = value
    if any(head.get(f) is None for f in HEAD_FIELDS):
        raise Malformed("v, seq, hash, time, key_id and sig are all required")
    if type(head["v"]) is not int or type(head["seq"]) is not int or not 0 <= head["seq"] < 2**64:
        raise Malformed("v and seq must be integers")
    if not isinstance(head["hash"], str) or not re.fullmatch(r"[0-9a-f]{64}", head["hash"]):
        raise Malformed("hash is not 64 lower-case hex digits")
    if not isinstance(head["key_id"], str) or not re.fullmatch(r"[0-9a-f]{16}", head["key_id"]):
        raise Malformed("key_id is not 16 lower-case hex digits")
    if not isinstance(head["sig"], str):
        raise Malformed("sig is not a string")
    return head


def check_head(line, keys):
    """The (seq, hash) a signed head line vouches for; Malformed if it does not verify."""
    head = parse_head(line)
    seq, h = head["seq"], bytes.fromhex(head["hash"])
    message = head_message(seq, h, *parse_time(head["time"]))
    signature = _b64(head["sig"], 64, "sig")
    if head["v"] != 1:
        raise Malformed("version %d (this verifier knows 1)" % head["v"])
    public = keys.get(head["key_id"])
    if public is None:
        raise Malformed("key_id %s is not in the keys file (a key rotated out of the file, or a forged head)" % head["key_id"])
    if not ed25519_verify(public, message, signature):
        raise Malformed("its signature does not verify under key %s" % head["key_id"])
    return seq, h


def verify(export_lines, head_lines=(), key_lines=(), anchors=()):
    """The verdict on an export: a dict with ok, and problem, seq, message."""
    keys = load_keys(key_lines) if head_lines else {}
    anchored, signed = list(anchors), {}
    for n, line in enumerate(head_lines, 1):
        if line.strip():
            try:
                seq, h = check_head(line, keys)
                if signed.setdefault(seq, h) != h:
                    raise Malformed("another signed head names hash %s for seq %d (the key signed two histories)" % (signed[seq].hex(), seq))
            except Malformed as e:
                return {"ok": False, "problem": "bad-head", "head_line": n, "message": "head line %d: %s" % (n, e)}
            anchored.append((seq, h))
    try:
        v = Verifier(anchored)
        for n, line in enumerate(export_lines, 1):
            if not line.strip():
                continue
            try:
                rec = decode_record(line)
            except Malformed as e:
                return {"ok": False, "problem": "malformed", "line": n, "message": "line %d of the export: %s" % (n, e)}
            v.add(rec)
        seq, h = v.finish()
    except ChainProblem as p:
        return {"ok": False, "problem": p.problem, "seq": p.seq, "message": str(p)}
    return {"ok": True, "problem": "none", "seq": seq, "hash": h.hex(), "elided": v.elided,
            "heads": len(anchored) - len(anchors),
            "message": "verified: %d records (%d elided), head %d:%s" % (seq, v.elided, seq, h.hex())}


def parse_anchor(text):
    seq, _, h = text.partition(":")
    if not re.fullmatch("[0-9]+", seq) or int(seq) == 0 or not re.fullmatch(r"[0-9a-fA-F]{64}", h):
        raise ValueError("--anchor %r: want SEQ:HASH" % text)
    return int(seq), bytes.fromhex(h)


# ---------------------------------------------------------------------------

# RFC 8032 section 7.1, test 1: an ed25519 key and its signature of the empty message.
RFC8032_SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
RFC8032_PUBLIC = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
RFC8032_SIG = ("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555"
               "fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")


def self_test(path):
    """Checks this verifier against the published vectors; returns the failures."""
    with open(path, encoding="utf-8") as f:
        vectors = json.load(f)
    failures, checks = [], 0

    def check(ok, what):
        """ok is a bool, or a function returning one (raising counts as false)."""
        nonlocal checks
        checks += 1
        try:
            ok = ok() if callable(ok) else ok
        except ValueError as e:
            ok, what = False, "%s: %s" % (what, e)
        if not ok:
            failures.append(what)

    public, sig = bytes.fromhex(RFC8032_PUBLIC), bytes.fromhex(RFC8032_SIG)
    check(public_key_from_seed(bytes.fromhex(RFC8032_SEED)) == public, "RFC 8032 test 1: public key")
    check(ed25519_verify(public, b"", sig), "RFC 8032 test 1: signature")
    check(not ed25519_verify(public, b"x", sig), "RFC 8032 test 1: another message is refused")
    for r in vectors["records"]:
        check(lambda: encode_v1(decode_record(r["json"])).hex() == r["encoding_hex"], "record %s: encoding" % r["name"])
        check(lambda: hashlib.sha256(encode_v1(decode_record(r["json"]))).hexdigest() == r["hash"] == decode_record(r["json"])["hash"].hex(),
              "record %s: hash" % r["name"])
    keys = {}
    for k in vectors["keys"]:
        public = public_key_from_seed(_b64(k["test_only_seed"], 32, "seed"))
        keys.update(load_keys([k["public_key_line"]]))
        check(key_id(public) == k["key_id"] and load_keys([k["public_key_line"]]) == {k["key_id"]: public}, "%s: public key" % k["name"])
    for h in vectors["heads"]:
        head = json.loads(h["head"])
        check(head_message(head["seq"], bytes.fromhex(head["hash"]), *parse_time(head["time"])).hex() == h["message_hex"], "%s: message" % h["name"])
        check(lambda: check_head(h["head"], keys) == (head["seq"], bytes.fromhex(head["hash"])), "%s: signature" % h["name"])
    for c in vectors["chains"]:
        got = verify(c["export"], c.get("heads", []), c.get("keys", []), [parse_anchor(a) for a in c.get("anchors", [])])
        want = c["want"]
        if want["problem"] == "bad-head":
            ok = got["problem"] == "bad-head" and got["head_line"] == want["head_line"]
        elif want["problem"] == "malformed":
            ok = got["problem"] == "malformed" and got["line"] == want["line"]
        else:
            ok = got["problem"] == want["problem"] and got["seq"] == want.get("seq", 0)
        check(ok, "chain %r: got %s, want %s" % (c["name"], got["message"], want))
    return checks, failures


def _open(path):
    return sys.stdin.buffer if path == "-" else open(path, "rb")


def _lines(files):
    """The lines of open files, one after the other, read as they are needed
    (an export may be larger than memory), invalid UTF-8 read as Go reads it."""
    for f in files:
        with f:
            for raw in f:
                yield raw.decode("utf-8", "cairn-per-byte")


def _read_lines(path):
    """The lines of a small file (heads, keys)."""
    return list(_lines([_open(path)]))


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(
        description="Verify an NDJSON export of Cairn's audit trail (GET /v1/audit/stream) and its signed heads, "
                    "independently of Cairn. See docs/audit.md.",
        epilog="Exit status: 0 verified, 1 a problem found (the first bad seq is printed), 2 a usage error.")
    ap.add_argument("export", nargs="*", help="the export: one record per line ('-' for stdin); several files "
                                              "(archives, then the live export) are read in order as one trail")
    ap.add_argument("--heads", help="signed heads, one JSON object per line (needs --keys)")
    ap.add_argument("--keys", help="public keys file: lines 'ed25519 <base64 key> [comment]'")
    ap.add_argument("--anchor", action="append", default=[], metavar="SEQ:HASH", help="a head kept elsewhere (repeatable)")
    ap.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    ap.add_argument("--self-test", action="store_true", help="check this verifier against the published test vectors")
    ap.add_argument("--vectors", default=os.path.join(here, "..", "docs", "audit-vectors", "vectors.json"),
                    help="the test vectors for --self-test (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.self_test:
        checks, failures = self_test(args.vectors)
        for f in failures:
            print("FAIL:", f)
        print("self-test: %d of %d checks passed" % (checks - len(failures), checks))
        return 1 if failures else 0
    if not args.export:
        ap.error("an export file is required (or --self-test)")
    if bool(args.heads) != bool(args.keys):
        ap.error("--heads and --keys go together")
    try:
        anchors = [parse_anchor(a) for a in args.anchor]
        heads = _read_lines(args.heads) if args.heads else []
        key_lines = _read_lines(args.keys) if args.keys else []
        if args.keys:
            load_keys(key_lines)
        export = [_open(path) for path in args.export]  # every file opens, or none is read
    except (OSError, ValueError) as e:  # Malformed keys are a usage error too
        ap.error(str(e))
    try:
        verdict = verify(_lines(export), heads, key_lines, anchors)
    except OSError as e:
        print("verify-audit.py: reading the export: %s" % e, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(verdict, sort_keys=True))
    else:
        print(verdict["message"] if verdict["ok"] else "FAILED: " + verdict["message"])
    return 0 if verdict["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
