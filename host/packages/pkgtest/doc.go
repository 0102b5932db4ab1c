// Package pkgtest builds Python wheels and serves them from a loopback HTTP
// server as a Pyodide index (pyodide-lock.json + wheels) and as a PEP 503 /
// PEP 691 simple index, counting the requests it serves: the package tests
// run without the internet.
package pkgtest
