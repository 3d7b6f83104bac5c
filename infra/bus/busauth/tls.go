package busauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// TLS file names in a keys directory.
const (
	CAFile        = "bus-ca.pem"
	caKeyFile     = "bus-ca-key.pem"
	serverCrtFile = "bus-server.pem"
	serverKeyFile = "bus-server-key.pem"
)

// ServerTLS is the TLS configuration of a bus server and where its CA's
// certificate is (clients verify the server with it: bus.Config.CAFile).
type ServerTLS struct {
	Config *tls.Config
	CAFile string
}

// LoadOrCreateServerTLS gives a bus server listening beyond loopback its
// TLS: a CA kept in dir (made once, ECDSA P-256, 10 years) and a server
// certificate it signs, made anew at every start for hosts (names and IP
// addresses agents dial) plus this machine's host name, its interface
// addresses and loopback, valid for a year.
func LoadOrCreateServerTLS(dir string, hosts []string) (ServerTLS, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ServerTLS{}, fmt.Errorf("busauth: %w", err)
	}
	caCert, caKey, err := loadOrCreateCA(dir)
	if err != nil {
		return ServerTLS{}, err
	}
	names, ips := sans(hosts)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return ServerTLS{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "cairn bus"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     names,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return ServerTLS{}, fmt.Errorf("busauth: server certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return ServerTLS{}, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := WriteSecretFile(filepath.Join(dir, serverKeyFile), keyPEM); err != nil {
		return ServerTLS{}, err
	}
	if err := WriteSecretFile(filepath.Join(dir, serverCrtFile), certPEM); err != nil {
		return ServerTLS{}, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return ServerTLS{}, err
	}
	return ServerTLS{
		Config: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		CAFile: filepath.Join(dir, CAFile),
	}, nil
}

func loadOrCreateCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPath, keyPath := filepath.Join(dir, CAFile), filepath.Join(dir, caKeyFile)
	keyPEM, err := ReadSecretFile(keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		return createCA(certPath, keyPath)
	}
	if err != nil {
		return nil, nil, err
	}
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, fmt.Errorf("busauth: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("busauth: bus CA in %s: %w", dir, err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, err
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("busauth: bus CA key in %s is not ECDSA", dir)
	}
	return cert, key, nil
}

func createCA(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "cairn bus CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("busauth: CA certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	if err := WriteSecretFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})); err != nil {
		return nil, nil, err
	}
	// The CA certificate is public: agents need a copy.
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, nil, fmt.Errorf("busauth: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// sans are the certificate's names and addresses: hosts, this machine's
// host name and interface addresses, and loopback.
func sans(hosts []string) ([]string, []net.IP) {
	names := []string{"localhost"}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if h, err := os.Hostname(); err == nil && h != "" {
		names = append(names, h)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				ips = append(ips, n.IP)
			}
		}
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !ip.IsUnspecified() {
				ips = append(ips, ip)
			}
		} else if h != "" {
			names = append(names, h)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	return names, slices.CompactFunc(ips, func(a, b net.IP) bool { return a.Equal(b) })
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
