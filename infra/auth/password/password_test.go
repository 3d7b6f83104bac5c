package password

import (
	"errors"
	"strings"
	"testing"
)

func TestNewVerify(t *testing.T) {
	t.Parallel()
	p := CheapParams()
	for _, pw := range []string{"correct horse battery staple", "", "пароль", strings.Repeat("x", 10_000), "a\x00b"} {
		stored, err := New(pw, p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(stored, "$argon2id$v=19$m=64,t=1,p=1$") {
			t.Fatalf("stored %q", stored)
		}
		ok, err := Verify(pw, stored)
		if err != nil || !ok {
			t.Fatalf("%.20q: Verify = %v, %v", pw, ok, err)
		}
		for _, wrong := range []string{pw + "x", strings.ToUpper(pw) + "!", "a\x00c"} {
			if wrong == pw {
				continue
			}
			ok, err := Verify(wrong, stored)
			if err != nil || ok {
				t.Fatalf("%.20q accepted for %.20q (%v)", wrong, pw, err)
			}
		}
	}
}

func TestNewSaltsEachHash(t *testing.T) {
	t.Parallel()
	a, _ := New("pw", CheapParams())
	b, _ := New("pw", CheapParams())
	if a == b {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
}

// TestDefaultParams: the defaults are valid and round-trip.
func TestDefaultParams(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	stored, err := New("s3cret", p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "$argon2id$v=19$m=65536,t=3,p=4$") {
		t.Fatalf("stored %q", stored)
	}
	if ok, err := Verify("s3cret", stored); !ok || err != nil {
		t.Fatalf("Verify = %v, %v", ok, err)
	}
	if NeedsRehash(stored, p) {
		t.Fatal("fresh hash needs rehash")
	}
}

// TestVerifyKnownVector: a hash made by the reference implementation
// (phc-winner-argon2's CLI: echo -n password | argon2 somesalt -id -t 2 -m 16 -p 4 -l 32),
// so the PHC encoding and the parameters' meaning match other tools.
func TestVerifyKnownVector(t *testing.T) {
	t.Parallel()
	const stored = "$argon2id$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$GpZ3sK/oH9p7VIiV56G/64Zo/8GaUw434IimaPqxwCo"
	ok, err := Verify("password", stored)
	if err != nil || !ok {
		t.Fatalf("Verify = %v, %v", ok, err)
	}
	if ok, _ := Verify("passwore", stored); ok {
		t.Fatal("wrong password accepted")
	}
}

func TestParseHashRefuses(t *testing.T) {
	t.Parallel()
	good, err := New("pw", CheapParams())
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, "$")
	with := func(i int, v string) string {
		c := append([]string(nil), parts...)
		c[i] = v
		return strings.Join(c, "$")
	}
	tests := []struct {
		encoded string
		want    error
	}{
		{"", ErrMalformedHash},
		{"argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5", ErrMalformedHash},
		{good + "$", ErrMalformedHash},
		{with(1, "argon2i"), ErrUnsupportedHash},
		{with(1, "bcrypt"), ErrUnsupportedHash},
		{with(2, "v=16"), ErrUnsupportedHash},
		{with(2, "19"), ErrMalformedHash},
		{with(2, "v=019"), ErrMalformedHash},
		{with(3, "t=1,m=64,p=1"), ErrMalformedHash},
		{with(3, "m=64,t=1"), ErrMalformedHash},
		{with(3, "m=64,t=1,p=1,k=2"), ErrMalformedHash},
		{with(3, "m=064,t=1,p=1"), ErrMalformedHash},
		{with(3, "m=+64,t=1,p=1"), ErrMalformedHash},
		{with(3, "m=64,t=0,p=1"), ErrMalformedHash},
		{with(3, "m=64,t=1,p=0"), ErrMalformedHash},
		{with(3, "m=64,t=1,p=256"), ErrMalformedHash},
		{with(3, "m=4,t=1,p=1"), ErrMalformedHash},
		{with(3, "m=4294967296,t=1,p=1"), ErrMalformedHash},
		{with(3, "m=2097152,t=1,p=1"), ErrMalformedHash}, // 2 GiB: over MaxMemory
		{with(3, "m=64,t=101,p=1"), ErrMalformedHash},
		{with(4, parts[4]+"="), ErrMalformedHash},
		{with(4, parts[4][:10]+"\n"+parts[4][10:]), ErrMalformedHash},
		{with(4, "c2FsdA"), ErrMalformedHash}, // 4-byte salt
		{with(4, "!!!!"), ErrMalformedHash},
		{with(5, parts[5][:len(parts[5])-1]+"B"), ErrMalformedHash}, // stray bits in the last character
		{with(5, "a2V5"), ErrMalformedHash},                         // 3-byte key
	}
	for _, tc := range tests {
		_, err := ParseHash(tc.encoded)
		if !errors.Is(err, tc.want) {
			t.Errorf("%q: err %v, want %v", tc.encoded, err, tc.want)
		}
		if ok, err := Verify("pw", tc.encoded); ok || err == nil {
			t.Errorf("%q: Verify = %v, %v", tc.encoded, ok, err)
		}
		if !NeedsRehash(tc.encoded, CheapParams()) {
			t.Errorf("%q: unreadable hash does not need a rehash", tc.encoded)
		}
	}
}

func TestNeedsRehash(t *testing.T) {
	t.Parallel()
	p := CheapParams()
	stored, _ := New("pw", p)
	if NeedsRehash(stored, p) {
		t.Fatal("same params need rehash")
	}
	for _, change := range []func(*Params){
		func(q *Params) { q.Memory *= 2 },
		func(q *Params) { q.Iterations++ },
		func(q *Params) { q.Parallelism++ },
		func(q *Params) { q.SaltLength = 32 },
		func(q *Params) { q.KeyLength = 64 },
	} {
		q := p
		change(&q)
		if !NeedsRehash(stored, q) {
			t.Errorf("%+v: no rehash for %+v", p, q)
		}
	}
}

func TestParamsValidate(t *testing.T) {
	t.Parallel()
	bad := Params{Memory: 1, Iterations: 0, Parallelism: 0, SaltLength: 2, KeyLength: 1000}
	err := bad.Validate()
	if !errors.Is(err, ErrInvalidParams) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"parallelism", "memory", "iterations", "salt length", "key length"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not report %s", err, want)
		}
	}
	if _, err := New("pw", bad); !errors.Is(err, ErrInvalidParams) {
		t.Fatalf("New with bad params: %v", err)
	}
	if VerifyMissing("pw", bad) {
		t.Fatal("VerifyMissing reported a match")
	}
}

// FuzzParseHash: parsing never panics; what it accepts is canonical
// (renders back to the same string) and within bounds.
func FuzzParseHash(f *testing.F) {
	for _, seed := range []string{
		"$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U",
		"$argon2id$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$GpZ3sK/oH9p7VIiV56G/64Zo/8GaUw434IimaPqxwCo",
		"$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5",
		"$argon2id$v=19$m=064,t=1,p=1$$", "$$$$$", "", "$argon2id$v=19$m=1,t=1,p=1$\n$\r",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, encoded string) {
		h, err := ParseHash(encoded)
		if err != nil {
			if !errors.Is(err, ErrMalformedHash) && !errors.Is(err, ErrUnsupportedHash) {
				t.Fatalf("%q: unclassified error %v", encoded, err)
			}
			return
		}
		if h.String() != encoded {
			t.Fatalf("not canonical: %q renders as %q", encoded, h.String())
		}
		if err := h.Params.Validate(); err != nil {
			t.Fatalf("%q: accepted out-of-bounds params: %v", encoded, err)
		}
	})
}

func TestHasherMakesVerifiableHashes(t *testing.T) {
	h := Hasher{Params: CheapParams()}
	stored, err := h.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Verify("correct horse", stored); !ok || err != nil {
		t.Fatalf("Verify = %v, %v", ok, err)
	}
	if NeedsRehash(stored, CheapParams()) || !NeedsRehash(stored, DefaultParams()) {
		t.Fatal("the hash does not record its parameters")
	}
	if _, err := (Hasher{}).Hash("x"); err == nil {
		t.Fatal("zero parameters hashed")
	}
}
