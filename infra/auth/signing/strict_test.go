package signing

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
)

const testNonce = "0123456789abcdef0123456789abcdef"

// TestStringToSignStrict: the exact canonical string, line by line.
func TestStringToSignStrict(t *testing.T) {
	t.Parallel()
	body := `{"image":"cairn/base"}`
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{
			name: "GET without a body",
			req: Request{Method: "GET", PathQuery: "/v1/sessions?limit=5", Host: "cairn:8080", Date: "2025-03-01T12:00:00+00:00",
				Version: testVersion, Nonce: testNonce, ContentSHA256: EmptyBodySHA256},
			want: "CAIRN1-HMAC-SHA256\nGET\n/v1/sessions?limit=5\n2025-03-01T12:00:00+00:00\nhost:cairn:8080\n" +
				"content-type:application/octet-stream\nx-backendai-version:v8.20240915\nx-cairn-nonce:" + testNonce +
				"\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		},
		{
			name: "POST with a JSON body: its hash, the media type without parameters",
			req: Request{Method: "POST", PathQuery: "/v1/sessions", Host: "api.example.com", ContentType: "Application/JSON; charset=utf-8",
				Date: "2025-03-02T05:00:00+09:00", Version: "v9", Nonce: "N_-abcdefghijklmnop", ContentSHA256: BodySHA256([]byte(body))},
			want: "CAIRN1-HMAC-SHA256\nPOST\n/v1/sessions\n2025-03-02T05:00:00+09:00\nhost:api.example.com\n" +
				"content-type:application/json\nx-backendai-version:v9\nx-cairn-nonce:N_-abcdefghijklmnop\n" +
				hexSHA256(body),
		},
		{
			name: "upload: raw path and query as sent",
			req: Request{Method: "PUT", PathQuery: "/v1/vfolders/x/files/content?path=a%20b.bin", Host: "[::1]:9", ContentType: "application/octet-stream",
				Date: "Sat, 01 Mar 2025 23:30:00 GMT", Version: "v8", Nonce: testNonce, ContentSHA256: hexSHA256("bytes")},
			want: "CAIRN1-HMAC-SHA256\nPUT\n/v1/vfolders/x/files/content?path=a%20b.bin\nSat, 01 Mar 2025 23:30:00 GMT\nhost:[::1]:9\n" +
				"content-type:application/octet-stream\nx-backendai-version:v8\nx-cairn-nonce:" + testNonce + "\n" + hexSHA256("bytes"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StringToSignStrict(tc.req); got != tc.want {
				t.Fatalf("string to sign:\n got %q\nwant %q", got, tc.want)
			}
			// The signature is the HMAC chain of the compat mode over it.
			d, err := ParseDate(tc.req.Date)
			if err != nil {
				t.Fatal(err)
			}
			mac := func(key []byte, msg string) []byte {
				m := hmac.New(sha256.New, key)
				m.Write([]byte(msg))
				return m.Sum(nil)
			}
			key := mac(mac([]byte(testSecretKey), d.Format("20060102")), tc.req.Host)
			want := "BackendAI signMethod=CAIRN1-HMAC-SHA256, credential=" + testAccessKey + ":" + hex.EncodeToString(mac(key, tc.want))
			got, err := SignStrict(testAccessKey, testSecretKey, tc.req)
			if err != nil || got != want {
				t.Fatalf("SignStrict:\n got %s, %v\nwant %s", got, err, want)
			}
		})
	}
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestSignStrictRefusesIncompleteRequests(t *testing.T) {
	t.Parallel()
	ok := Request{Method: "GET", PathQuery: "/", Host: "h", Date: "2025-03-01T12:00:00Z", Version: "v8", Nonce: testNonce, ContentSHA256: EmptyBodySHA256}
	for _, tc := range []struct {
		mut  func(*Request)
		want Reason
	}{
		{func(r *Request) { r.Nonce = "" }, ReasonMissingNonce},
		{func(r *Request) { r.Nonce = "short" }, ReasonMalformedHeader},
		{func(r *Request) { r.Nonce = strings.Repeat("a", 65) }, ReasonMalformedHeader},
		{func(r *Request) { r.Nonce = "0123456789abcdef 123" }, ReasonMalformedHeader},
		{func(r *Request) { r.ContentSHA256 = "" }, ReasonMissingContentHash},
		{func(r *Request) { r.ContentSHA256 = strings.ToUpper(EmptyBodySHA256) }, ReasonMalformedHeader},
		{func(r *Request) { r.ContentSHA256 = EmptyBodySHA256[:63] + "g" }, ReasonMalformedHeader},
		{func(r *Request) { r.Date = "soon" }, ReasonInvalidDate},
	} {
		r := ok
		tc.mut(&r)
		if _, err := SignStrict(testAccessKey, testSecretKey, r); ReasonOf(err) != tc.want {
			t.Errorf("%+v: %v, want %v", r, err, tc.want)
		}
	}
	if _, err := SignStrict(testAccessKey, testSecretKey, ok); err != nil {
		t.Fatal(err)
	}
}

// strictSigned builds the headers of a strict-mode request signed at
// date, for method on /v1/sessions?limit=5 at cairn:8080 with body.
func strictSigned(t testing.TB, method, date, nonce string, body []byte) http.Header {
	t.Helper()
	h := http.Header{}
	h.Set(HeaderDate, date)
	h.Set(HeaderVersion, testVersion)
	h.Set(HeaderContentType, "application/json")
	h.Set(HeaderNonce, nonce)
	h.Set(HeaderContentSHA256, BodySHA256(body))
	auth, err := SignStrict(testAccessKey, testSecretKey, Request{Method: method, PathQuery: "/v1/sessions?limit=5", Host: "cairn:8080",
		ContentType: "application/json", Date: date, Version: testVersion, Nonce: nonce, ContentSHA256: BodySHA256(body)})
	if err != nil {
		t.Fatal(err)
	}
	h.Set(HeaderAuthorization, auth)
	return h
}

func strictVerifier(t testing.TB, now time.Time, size int) *Verifier {
	t.Helper()
	v := verifier(now, map[string]Secret{
		testAccessKey: {SecretKey: testSecretKey, Active: true},
	})
	var err error
	if v.Replay, err = NewReplayCache(size); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyStrict(t *testing.T) {
	t.Parallel()
	date := FormatDate(testNow.Add(-time.Minute))
	body := []byte(`{"a":1}`)
	post := func(in Incoming) Incoming { in.Method, in.Body = "POST", body; return in }
	tests := []struct {
		name    string
		headers func() http.Header
		in      func(Incoming) Incoming
		want    Reason
	}{
		{name: "valid GET", headers: func() http.Header { return strictSigned(t, "GET", date, testNonce, nil) }},
		{name: "valid POST with its body", headers: func() http.Header { return strictSigned(t, "POST", date, testNonce, body) }, in: post},
		{name: "signMethod in another case", headers: func() http.Header {
			h := strictSigned(t, "GET", date, testNonce, nil)
			h.Set(HeaderAuthorization, strings.Replace(h.Get(HeaderAuthorization), "CAIRN1-HMAC-SHA256", "cairn1-hmac-sha256", 1))
			return h
		}},
		{name: "another body under the signature", headers: func() http.Header { return strictSigned(t, "POST", date, testNonce, body) },
			in: func(in Incoming) Incoming { in = post(in); in.Body = []byte(`{"a":2}`); return in }, want: ReasonBodyMismatch},
		{name: "another body and its hash header", headers: func() http.Header {
			h := strictSigned(t, "POST", date, testNonce, body)
			h.Set(HeaderContentSHA256, BodySHA256([]byte(`{"a":2}`)))
			return h
		}, in: func(in Incoming) Incoming { in = post(in); in.Body = []byte(`{"a":2}`); return in }, want: ReasonBadSignature},
		{name: "a body where none was signed", headers: func() http.Header { return strictSigned(t, "GET", date, testNonce, nil) },
			in: func(in Incoming) Incoming { in.Body = []byte("x"); return in }, want: ReasonBodyMismatch},
		{name: "another nonce", headers: func() http.Header {
			h := strictSigned(t, "GET", date, testNonce, nil)
			h.Set(HeaderNonce, "fedcba9876543210fedcba9876543210")
			return h
		}, want: ReasonBadSignature},
		{name: "no nonce", headers: func() http.Header {
			h := strictSigned(t, "GET", date, testNonce, nil)
			h.Del(HeaderNonce)
			return h
		}, want: ReasonMissingNonce},
		{name: "malformed nonce", headers: func() http.Header {
			h := strictSigned(t, "GET", date, testNonce, nil)
			h.Set(HeaderNonce, "x")
			return h
		}, want: ReasonMalformedHeader},
		{name: "no content hash", headers: func() http.Header {
			h := strictSigned(t, "GET", date, testNonce, nil)
			h.Del(HeaderContentSHA256)
			return h
		}, want: ReasonMissingContentHash},
		{name: "upper-case content hash", headers: func() http.Header {
			h := strictSigned(t, "GET", date, testNonce, nil)
			h.Set(HeaderContentSHA256, strings.ToUpper(EmptyBodySHA256))
			return h
		}, want: ReasonMalformedHeader},
		{name: "a strict signature presented as a compat one", headers: func() http.Header {
			h := strictSigned(t, "GET", date, testNonce, nil)
			h.Set(HeaderAuthorization, strings.Replace(h.Get(HeaderAuthorization), MethodStrict, MethodHMACSHA256, 1))
			return h
		}, want: ReasonBadSignature},
		{name: "a compat signature presented as a strict one", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Set(HeaderAuthorization, strings.Replace(h.Get(HeaderAuthorization), MethodHMACSHA256, MethodStrict, 1))
			h.Set(HeaderNonce, testNonce)
			h.Set(HeaderContentSHA256, EmptyBodySHA256)
			return h
		}, want: ReasonBadSignature},
		{name: "date skew comes before the replay cache", headers: func() http.Header {
			return strictSigned(t, "GET", FormatDate(testNow.Add(-20*time.Minute)), testNonce, nil)
		}, want: ReasonDateSkew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := strictVerifier(t, testNow, 0)
			in := incoming(tc.headers())
			if tc.in != nil {
				in = tc.in(in)
			}
			res, err := v.Verify(t.Context(), in)
			if got := ReasonOf(err); got != tc.want {
				t.Fatalf("reason %v (%v), want %v", got, err, tc.want)
			}
			if err != nil {
				if !errors.Is(err, domain.ErrUnauthenticated) {
					t.Fatalf("%v is not KindUnauthenticated", err)
				}
				if v.Replay.Len() != 0 {
					t.Fatal("a refused request took a place in the replay cache")
				}
				return
			}
			if res.Mode != ModeStrict || res.AccessKey != testAccessKey || v.Replay.Len() != 1 {
				t.Fatalf("result %+v, cache %d", res, v.Replay.Len())
			}
		})
	}
}

// TestStrictReplayIsRefusedCompatIsNot: the same strict request twice is
// refused the second time (replayed); the same compat request is accepted
// every time within the window — the documented limitation of Backend.AI's
// signing.
func TestStrictReplayIsRefusedCompatIsNot(t *testing.T) {
	t.Parallel()
	v := strictVerifier(t, testNow, 0)
	date := FormatDate(testNow)
	strict := incoming(strictSigned(t, "GET", date, testNonce, nil))
	if _, err := v.Verify(t.Context(), strict); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := v.Verify(t.Context(), strict)
		if !errors.Is(err, ErrReplayed) || !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("replay: %v, want replayed", err)
		}
	}
	// A new nonce is a new request.
	if _, err := v.Verify(t.Context(), incoming(strictSigned(t, "GET", date, NewNonce(), nil))); err != nil {
		t.Fatal(err)
	}
	compat := incoming(signed(t, testAccessKey, testSecretKey, date))
	for range 3 {
		if _, err := v.Verify(t.Context(), compat); err != nil {
			t.Fatalf("compat replay refused: %v", err)
		}
	}
	if v.Replay.Len() != 2 {
		t.Fatalf("replay cache holds %d, want the 2 strict signatures", v.Replay.Len())
	}
}

// TestVerifyStrictOnly: a server that turns Backend.AI signing off
// refuses it before looking the key up, and still accepts strict mode.
func TestVerifyStrictOnly(t *testing.T) {
	t.Parallel()
	v := strictVerifier(t, testNow, 0)
	v.StrictOnly = true
	date := FormatDate(testNow)
	res, err := v.Verify(t.Context(), incoming(signed(t, testAccessKey, testSecretKey, date)))
	if !errors.Is(err, ErrUnsupportedMethod) || res.AccessKey != testAccessKey {
		t.Fatalf("compat under StrictOnly: %v, %+v", err, res)
	}
	if _, err := v.Verify(t.Context(), incoming(strictSigned(t, "GET", date, testNonce, nil))); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyStrictNeedsAReplayCache(t *testing.T) {
	t.Parallel()
	v := verifier(testNow, map[string]Secret{testAccessKey: {SecretKey: testSecretKey, Active: true}})
	_, err := v.Verify(t.Context(), incoming(strictSigned(t, "GET", FormatDate(testNow), testNonce, nil)))
	if err == nil || ReasonOf(err) != ReasonNone {
		t.Fatalf("err = %v, want a configuration error", err)
	}
}

// TestVerifyStrictStreamedBody: a streamed body's signature is checked
// over the claimed hash; the body is checked as it is read, and a
// different one ends in body-mismatch instead of io.EOF.
func TestVerifyStrictStreamedBody(t *testing.T) {
	t.Parallel()
	body := bytes.Repeat([]byte("0123456789"), 100_000)
	for _, tc := range []struct {
		name string
		sent []byte
		ok   bool
	}{
		{"the signed body", body, true},
		{"one byte changed", append(append([]byte{}, body[:len(body)-1]...), 'x'), false},
		{"truncated", body[:len(body)-1], false},
		{"longer", append(append([]byte{}, body...), 'x'), false},
		{"empty", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := strictVerifier(t, testNow, 0)
			in := incoming(strictSigned(t, "PUT", FormatDate(testNow), testNonce, body))
			in.Method, in.BodyStreamed = "PUT", true
			res, err := v.Verify(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			br := VerifyBody(bytes.NewReader(tc.sent), res.ContentSHA256)
			got, err := io.ReadAll(br)
			if tc.ok {
				if err != nil || !bytes.Equal(got, body) || br.Err() != nil {
					t.Fatalf("read %d bytes, %v, %v", len(got), err, br.Err())
				}
				return
			}
			if !errors.Is(err, ErrBodyMismatch) || !errors.Is(br.Err(), ErrBodyMismatch) {
				t.Fatalf("read: %v, Err: %v; want body-mismatch", err, br.Err())
			}
			if _, err := br.Read(make([]byte, 1)); !errors.Is(err, ErrBodyMismatch) {
				t.Fatalf("a read after the mismatch: %v", err)
			}
		})
	}
}

// TestSignHTTPStrict: requests signed by SignHTTPStrict, with and without
// bodies, verify on a net/http server that hands over the body it read;
// each is accepted once.
func TestSignHTTPStrict(t *testing.T) {
	t.Parallel()
	now := time.Now()
	v := strictVerifier(t, now, 0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, err = v.Verify(r.Context(), Incoming{Method: r.Method, PathQuery: r.RequestURI, Host: r.Host, Header: r.Header.Get, Body: body})
		if err != nil {
			http.Error(w, ReasonOf(err).String(), http.StatusUnauthorized)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	type body struct {
		name string
		rd   func() io.Reader
	}
	for _, b := range []body{
		{"none", func() io.Reader { return nil }},
		{"in memory", func() io.Reader { return strings.NewReader(`{"x":1}`) }},
		{"a plain reader (no GetBody)", func() io.Reader { return io.MultiReader(strings.NewReader(`{"x":`), strings.NewReader(`2}`)) }},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/sessions?x=%2F", b.rd())
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(HeaderContentType, "application/json")
		if err := SignHTTPStrict(req, testAccessKey, testSecretKey, testVersion, now); err != nil {
			t.Fatal(err)
		}
		if len(req.Header.Get(HeaderNonce)) != 32 || req.Header.Get(HeaderContentSHA256) == "" {
			t.Fatalf("%s: headers %v", b.name, req.Header)
		}
		replay := req.Clone(t.Context())
		if replay.GetBody != nil {
			if replay.Body, err = replay.GetBody(); err != nil {
				t.Fatal(err)
			}
		}
		for i, want := range []int{http.StatusOK, http.StatusUnauthorized} {
			r := req
			if i == 1 {
				r = replay
			}
			resp, err := srv.Client().Do(r)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want || (i == 1 && string(bytes.TrimSpace(got)) != "replayed") {
				t.Fatalf("%s, send %d: %d %s, want %d", b.name, i+1, resp.StatusCode, got, want)
			}
		}
	}
}

// FuzzStrictHeaders: whatever nonce and content hash a client puts in,
// SignStrict and Verify agree: what SignStrict signs verifies once and is
// then refused as replayed; what it refuses, Verify refuses for the same
// reason.
func FuzzStrictHeaders(f *testing.F) {
	f.Add(testNonce, EmptyBodySHA256, []byte(nil))
	f.Add("N_-abcdefghijklmnop", hexSHA256("x"), []byte("x"))
	f.Add("", "", []byte("x"))
	f.Add("0123456789abcdef\n", strings.ToUpper(EmptyBodySHA256), []byte(nil))
	f.Add(strings.Repeat("z", 65), EmptyBodySHA256[:63], []byte{0})
	f.Fuzz(func(t *testing.T, nonce, sum string, body []byte) {
		v := strictVerifier(t, testNow, 4)
		date := FormatDate(testNow)
		req := Request{Method: "POST", PathQuery: "/v1/sessions?limit=5", Host: "cairn:8080", ContentType: "application/json",
			Date: date, Version: testVersion, Nonce: nonce, ContentSHA256: sum}
		auth, signErr := SignStrict(testAccessKey, testSecretKey, req)
		h := http.Header{}
		h.Set(HeaderDate, date)
		h.Set(HeaderVersion, testVersion)
		h.Set(HeaderContentType, "application/json")
		h.Set(HeaderNonce, nonce)
		h.Set(HeaderContentSHA256, sum)
		if signErr != nil {
			auth = "BackendAI signMethod=CAIRN1-HMAC-SHA256, credential=" + testAccessKey + ":" + EmptyBodySHA256
		}
		h.Set(HeaderAuthorization, auth)
		in := Incoming{Method: "POST", PathQuery: "/v1/sessions?limit=5", Host: "cairn:8080", Header: h.Get, Body: body}
		_, err := v.Verify(context.Background(), in)
		if signErr != nil {
			if ReasonOf(signErr) == ReasonNone || ReasonOf(err) != ReasonOf(signErr) {
				t.Fatalf("SignStrict refused with %v, Verify with %v", signErr, err)
			}
			return
		}
		if BodySHA256(body) != sum {
			if !errors.Is(err, ErrBodyMismatch) {
				t.Fatalf("a body that is not the signed one: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("signed by SignStrict, refused by Verify: %v", err)
		}
		if _, err := v.Verify(context.Background(), in); !errors.Is(err, ErrReplayed) {
			t.Fatalf("replay: %v", err)
		}
	})
}
