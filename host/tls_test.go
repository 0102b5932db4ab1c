package host_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// testCA makes a CA and a server certificate it signs for 127.0.0.1: the
// CA's PEM file, and the server's TLS certificate.
func testCA(t *testing.T) (string, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "parselbox test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
}

// HTTPS from the sandbox to a loopback server whose certificate a private
// CA signed: with ca_file naming the CA, urllib reaches it (allowed by
// allow_net); without, the fetch fails (not as a refused address); with
// it, an address allow_net does not name is still refused.
func TestHTTPSPrivateCA(t *testing.T) {
	t.Parallel()
	caFile, cert := testCA(t)
	serve := func() *httptest.Server {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello over %s", map[bool]string{true: "TLS", false: "plain HTTP"}[r.TLS != nil])
		}))
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv
	}
	allowed, other := serve(), serve()
	hostPort := strings.TrimPrefix(allowed.URL, "https://")
	get := func(u string) string {
		return fmt.Sprintf("import urllib.request\nurllib.request.urlopen(%q).read().decode()", u)
	}
	sb := newSandbox(t, host.Config{AllowNet: []string{hostPort}, CAFile: caFile})
	if got := value(t, exec(t, sb, get(allowed.URL))); got != "hello over TLS" {
		t.Errorf("with ca_file: %v", got)
	}
	e := raised(t, exec(t, sb, get(other.URL)), "URLError")
	if !strings.Contains(e.Message, "is not allowed in the sandbox") {
		t.Errorf("an address allow_net does not name: %s", e.Message)
	}
	without := newSandbox(t, host.Config{AllowNet: []string{hostPort}})
	// (fetch says only "fetch failed": Deno's error does not say why)
	e = raised(t, exec(t, without, get(allowed.URL)), "URLError")
	if strings.Contains(e.Message, "not allowed") || !strings.Contains(e.Message, "fetch failed") {
		t.Errorf("without ca_file: %s: %s", e.Type, e.Message)
	}
	// A ca_file without a certificate stops the start, named.
	bad := filepath.Join(t.TempDir(), "empty.pem")
	if err := os.WriteFile(bad, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := host.New(t.Context(), host.Config{CAFile: bad, RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t)}); err == nil || !strings.Contains(err.Error(), "ca_file "+bad+": no PEM certificate in it") {
		t.Errorf("a ca_file without a certificate: %v", err)
	}
}
