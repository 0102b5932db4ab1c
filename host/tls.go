package host

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
)

// caFile checks the configuration's ca_file: a readable file holding PEM
// certificates. It returns its absolute path.
func caFile(name string) (string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", configErrorf("ca_file %q: %v", name, err)
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return "", configErrorf("ca_file: %v", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return "", configErrorf("ca_file %s: no PEM certificate in it", abs)
	}
	return abs, nil
}

// packageClient is the HTTP client of the host's package downloads: the
// default one, or with ca_file, one that trusts its CAs besides the
// system's.
func packageClient(caFile string) (*http.Client, error) {
	if caFile == "" {
		return http.DefaultClient, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, configErrorf("ca_file: %v", err)
	}
	pool.AppendCertsFromPEM(b)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: t}, nil
}
