package signing

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
)

var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func verifier(now time.Time, keys map[string]Secret) *Verifier {
	return &Verifier{
		Lookup: func(_ context.Context, ak string) (Secret, bool, error) {
			s, ok := keys[ak]
			return s, ok, nil
		},
		Now: func() time.Time { return now },
	}
}

// signed builds the headers of a request signed at date by accessKey with
// secretKey, for GET /v1/sessions?limit=5 on host cairn:8080.
func signed(t testing.TB, accessKey, secretKey, date string) http.Header {
	t.Helper()
	h := http.Header{}
	h.Set(HeaderDate, date)
	h.Set(HeaderVersion, testVersion)
	h.Set(HeaderContentType, "application/json")
	auth, err := Sign(accessKey, secretKey, Request{Method: "GET", PathQuery: "/v1/sessions?limit=5", Host: "cairn:8080",
		ContentType: "application/json", Date: date, Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	h.Set(HeaderAuthorization, auth)
	return h
}

func incoming(h http.Header) Incoming {
	return Incoming{Method: "GET", PathQuery: "/v1/sessions?limit=5", Host: "cairn:8080", Header: h.Get}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	keys := map[string]Secret{
		testAccessKey: {SecretKey: testSecretKey, Active: true},
		"AKINACTIVE":  {SecretKey: "inactive-secret", Active: false},
	}
	date := FormatDate(testNow.Add(-time.Minute))
	tests := []struct {
		name    string
		headers func() http.Header
		in      func(Incoming) Incoming
		want    Reason // ReasonNone: accepted
		wantAK  string // Result.AccessKey expected even on refusal
	}{
		{name: "valid", headers: func() http.Header { return signed(t, testAccessKey, testSecretKey, date) }, wantAK: testAccessKey},
		{name: "valid with X-BackendAI-Date only", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Del(HeaderDate)
			h.Set(HeaderBackendAIDate, date)
			return h
		}, wantAK: testAccessKey},
		{name: "Date wins over X-BackendAI-Date", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Set(HeaderBackendAIDate, FormatDate(testNow.Add(-2*time.Minute)))
			return h
		}, wantAK: testAccessKey},
		{name: "signed with X-BackendAI-Date while Date differs", headers: func() http.Header {
			other := FormatDate(testNow.Add(-2 * time.Minute))
			h := signed(t, testAccessKey, testSecretKey, other)
			h.Set(HeaderBackendAIDate, other)
			h.Set(HeaderDate, date)
			return h
		}, want: ReasonBadSignature, wantAK: testAccessKey},
		{name: "no Authorization", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Del(HeaderAuthorization)
			return h
		}, want: ReasonMissingHeader},
		{name: "Bearer scheme", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Set(HeaderAuthorization, "Bearer abc")
			return h
		}, want: ReasonUnsupportedScheme},
		{name: "HMAC-SHA1", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Set(HeaderAuthorization, strings.Replace(h.Get(HeaderAuthorization), "SHA256", "SHA1", 1))
			return h
		}, want: ReasonUnsupportedMethod},
		{name: "no date", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Del(HeaderDate)
			return h
		}, want: ReasonMissingDate, wantAK: testAccessKey},
		{name: "unparsable date", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Set(HeaderDate, "now-ish")
			return h
		}, want: ReasonInvalidDate, wantAK: testAccessKey},
		{name: "date 20 min behind", headers: func() http.Header {
			return signed(t, testAccessKey, testSecretKey, FormatDate(testNow.Add(-20*time.Minute)))
		}, want: ReasonDateSkew, wantAK: testAccessKey},
		{name: "date 20 min ahead", headers: func() http.Header {
			return signed(t, testAccessKey, testSecretKey, FormatDate(testNow.Add(20*time.Minute)))
		}, want: ReasonDateSkew, wantAK: testAccessKey},
		{name: "no version", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Del(HeaderVersion)
			return h
		}, want: ReasonMissingVersion, wantAK: testAccessKey},
		{name: "unknown key", headers: func() http.Header { return signed(t, "AKUNKNOWN", testSecretKey, date) }, want: ReasonUnknownKey, wantAK: "AKUNKNOWN"},
		{name: "inactive key, right secret", headers: func() http.Header { return signed(t, "AKINACTIVE", "inactive-secret", date) }, want: ReasonInactiveKey, wantAK: "AKINACTIVE"},
		{name: "inactive key, wrong secret: only bad signature is told", headers: func() http.Header { return signed(t, "AKINACTIVE", "guess", date) }, want: ReasonBadSignature, wantAK: "AKINACTIVE"},
		{name: "wrong secret", headers: func() http.Header { return signed(t, testAccessKey, "wrong", date) }, want: ReasonBadSignature, wantAK: testAccessKey},
		{name: "other path", headers: func() http.Header { return signed(t, testAccessKey, testSecretKey, date) },
			in: func(in Incoming) Incoming { in.PathQuery = "/v1/sessions?limit=6"; return in }, want: ReasonBadSignature, wantAK: testAccessKey},
		{name: "other method", headers: func() http.Header { return signed(t, testAccessKey, testSecretKey, date) },
			in: func(in Incoming) Incoming { in.Method = "DELETE"; return in }, want: ReasonBadSignature, wantAK: testAccessKey},
		{name: "host without the port", headers: func() http.Header { return signed(t, testAccessKey, testSecretKey, date) },
			in: func(in Incoming) Incoming { in.Host = "cairn"; return in }, want: ReasonBadSignature, wantAK: testAccessKey},
		{name: "host from the Host header", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Set(HeaderHost, "cairn:8080")
			return h
		}, in: func(in Incoming) Incoming { in.Host = ""; return in }, wantAK: testAccessKey},
		{name: "other content type", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Set(HeaderContentType, "text/plain")
			return h
		}, want: ReasonBadSignature, wantAK: testAccessKey},
		{name: "content type parameters are not signed", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Set(HeaderContentType, "Application/Json; charset=utf-8")
			return h
		}, wantAK: testAccessKey},
		{name: "other version", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			h.Set(HeaderVersion, "v9.20250101")
			return h
		}, want: ReasonBadSignature, wantAK: testAccessKey},
		{name: "upper-case hex signature", headers: func() http.Header {
			h := signed(t, testAccessKey, testSecretKey, date)
			auth := h.Get(HeaderAuthorization)
			i := strings.LastIndexByte(auth, ':')
			h.Set(HeaderAuthorization, auth[:i]+strings.ToUpper(auth[i:]))
			return h
		}, wantAK: testAccessKey},
	}
	v := verifier(testNow, keys)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := incoming(tc.headers())
			if tc.in != nil {
				in = tc.in(in)
			}
			res, err := v.Verify(t.Context(), in)
			if got := ReasonOf(err); got != tc.want {
				t.Fatalf("reason %v (%v), want %v", got, err, tc.want)
			}
			if res.AccessKey != tc.wantAK {
				t.Fatalf("result access key %q, want %q", res.AccessKey, tc.wantAK)
			}
			if err == nil {
				return
			}
			if !errors.Is(err, domain.ErrUnauthenticated) || domain.KindOf(err) != domain.KindUnauthenticated {
				t.Fatalf("%v is not KindUnauthenticated", err)
			}
			sentinel := map[Reason]error{
				ReasonMissingHeader: ErrMissingHeader, ReasonMalformedHeader: ErrMalformedHeader,
				ReasonUnsupportedScheme: ErrUnsupportedScheme, ReasonUnsupportedMethod: ErrUnsupportedMethod,
				ReasonMissingCredential: ErrMissingCredential, ReasonMissingDate: ErrMissingDate,
				ReasonInvalidDate: ErrInvalidDate, ReasonDateSkew: ErrDateSkew, ReasonMissingVersion: ErrMissingVersion,
				ReasonUnknownKey: ErrUnknownKey, ReasonInactiveKey: ErrInactiveKey, ReasonBadSignature: ErrBadSignature,
			}[tc.want]
			if !errors.Is(err, sentinel) {
				t.Fatalf("errors.Is(%v, sentinel of %v) is false", err, tc.want)
			}
			for r, other := range map[Reason]error{ReasonBadSignature: ErrBadSignature, ReasonUnknownKey: ErrUnknownKey} {
				if r != tc.want && errors.Is(err, other) {
					t.Fatalf("%v also matches %v", err, r)
				}
			}
		})
	}
}

// TestVerifySkewBounds: accepted strictly inside ±MaxSkew, refused at the
// bounds and beyond; MaxSkew is configurable.
func TestVerifySkewBounds(t *testing.T) {
	t.Parallel()
	keys := map[string]Secret{testAccessKey: {SecretKey: testSecretKey, Active: true}}
	for _, tc := range []struct {
		maxSkew time.Duration
		off     time.Duration
		ok      bool
	}{
		{0, 15*time.Minute - time.Second, true},
		{0, -15*time.Minute + time.Second, true},
		{0, 15 * time.Minute, false},
		{0, -15 * time.Minute, false},
		{0, 0, true},
		{time.Minute, 59 * time.Second, true},
		{time.Minute, -61 * time.Second, false},
	} {
		v := verifier(testNow, keys)
		v.MaxSkew = tc.maxSkew
		_, err := v.Verify(t.Context(), incoming(signed(t, testAccessKey, testSecretKey, FormatDate(testNow.Add(tc.off)))))
		if ok := err == nil; ok != tc.ok {
			t.Errorf("max %v, offset %v: err %v, want ok=%v", tc.maxSkew, tc.off, err, tc.ok)
		}
		if err != nil && ReasonOf(err) != ReasonDateSkew {
			t.Errorf("offset %v: %v, want date-skew", tc.off, err)
		}
	}
}

// TestVerifyZoneDay: a client writing its local zone signs with its local
// day; Verify derives the same key.
func TestVerifyZoneDay(t *testing.T) {
	t.Parallel()
	keys := map[string]Secret{testAccessKey: {SecretKey: testSecretKey, Active: true}}
	now := time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC)
	for _, date := range []string{
		"2025-03-02T05:00:00+09:00", // already March 2nd in Seoul
		"2025-03-01T15:00:00-05:00",
		"2025-03-01T20:00:00", // no zone: UTC
		"20250301T20:00:00Z",  // the form in Backend.AI's docs
		"Sat, 01 Mar 2025 20:00:00 GMT",
	} {
		if _, err := verifier(now, keys).Verify(t.Context(), incoming(signed(t, testAccessKey, testSecretKey, date))); err != nil {
			t.Errorf("%s: %v", date, err)
		}
	}
}

func TestVerifyLookupFailure(t *testing.T) {
	t.Parallel()
	down := errors.New("store down")
	v := &Verifier{
		Lookup: func(context.Context, string) (Secret, bool, error) { return Secret{}, false, down },
		Now:    func() time.Time { return testNow },
	}
	_, err := v.Verify(t.Context(), incoming(signed(t, testAccessKey, testSecretKey, FormatDate(testNow))))
	if !errors.Is(err, down) || ReasonOf(err) != ReasonNone || errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("err = %v, want the lookup's error, not a refusal", err)
	}
}

func TestVerifyRequiresLookup(t *testing.T) {
	t.Parallel()
	_, err := (&Verifier{}).Verify(t.Context(), incoming(http.Header{}))
	if err == nil || ReasonOf(err) != ReasonNone {
		t.Fatalf("err = %v, want a configuration error", err)
	}
}

// TestVerifyOverNetHTTP: a request signed by SignHTTP and sent by net/http
// verifies on a net/http server with r.RequestURI, r.Host, r.Header.Get.
func TestVerifyOverNetHTTP(t *testing.T) {
	t.Parallel()
	now := time.Now()
	v := verifier(now, map[string]Secret{testAccessKey: {SecretKey: testSecretKey, Active: true}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := v.Verify(r.Context(), Incoming{Method: r.Method, PathQuery: r.RequestURI, Host: r.Host, Header: r.Header.Get})
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		w.Write([]byte(res.AccessKey))
	}))
	defer srv.Close()
	for _, target := range []string{"/v1/sessions", "/v1/sessions?owner_access_key=AK%20X&limit=5", "/v1/folders/%C3%A9t%C3%A9/files"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := SignHTTP(req, testAccessKey, testSecretKey, testVersion, now); err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || string(body) != testAccessKey {
			t.Fatalf("%s: %d %s", target, resp.StatusCode, body)
		}
	}
}
