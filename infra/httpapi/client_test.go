package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairnhq/cairn/infra/httpapi"
)

func TestCallJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" || (r.Method == "POST" && r.Header.Get("Content-Type") != "application/json") {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/missing" {
			http.Error(w, "nope", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":"x"}`))
	}))
	defer srv.Close()
	ctx, c := context.Background(), srv.Client()
	var out struct{ ID string }
	if err := httpapi.CallJSON(ctx, c, "POST", srv.URL+"/things", "tok", map[string]int{"a": 1}, http.StatusCreated, &out); err != nil || out.ID != "x" {
		t.Fatalf("201: %v %+v", err, out)
	}
	if err := httpapi.CallJSON(ctx, c, "GET", srv.URL+"/things", "tok", nil, 0, nil); err != nil {
		t.Fatalf("any 2xx: %v", err)
	}
	if err := httpapi.CallJSON(ctx, c, "GET", srv.URL+"/things", "tok", nil, http.StatusOK, nil); err == nil {
		t.Fatal("201 accepted when 200 was wanted")
	}
	if err := httpapi.CallJSON(ctx, c, "GET", srv.URL+"/missing", "tok", nil, 0, nil); err == nil {
		t.Fatal("404 accepted as 2xx")
	}
}
