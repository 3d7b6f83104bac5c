package devserver

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key (PEM) into
// dir and answers their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cairn test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// With a certificate the API serves HTTPS only, its URL says so, and the
// Web-UI's login cookie is Secure.
func TestAPIOverTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	cfg := testConfig(dir)
	cfg.TLSCertFile, cfg.TLSKeyFile = certFile, keyFile
	r := start(t, cfg)
	if !strings.HasPrefix(r.creds.APIURL, "https://") {
		t.Fatalf("API URL %q, want https", r.creds.APIURL)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 30 * time.Second}
	body, _ := json.Marshal(map[string]string{"email": r.creds.Email, "password": r.creds.Password})
	resp, err := client.Post(r.creds.APIURL+"/v1/auth/session", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the Web-UI login over TLS: %d", resp.StatusCode)
	}
	cookies := resp.Cookies()
	if len(cookies) == 0 {
		t.Fatal("login set no cookie")
	}
	for _, c := range cookies {
		if !c.Secure || !c.HttpOnly {
			t.Errorf("cookie %s: Secure %v, HttpOnly %v; want both over TLS", c.Name, c.Secure, c.HttpOnly)
		}
	}
	// Plain HTTP on the same port is not served.
	plain := "http://" + strings.TrimPrefix(r.creds.APIURL, "https://") + "/healthz"
	if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(plain); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP answered 200 on the TLS listener")
		}
	}
}

// Half a TLS configuration is refused before anything starts.
func TestTLSNeedsBoth(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.TLSCertFile = "cert.pem"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "both the certificate and the key") {
		t.Errorf("Validate: %v", err)
	}
}
