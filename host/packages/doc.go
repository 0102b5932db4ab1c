// Package packages resolves and fetches the packages a sandbox uses — Python
// wheels for Pyodide and npm packages for require() — on the host, so that
// the sandbox never needs network for them.
//
// The configuration lists them in one place (host.Config.Packages):
// "npm:NAME[@VERSION]" entries are npm packages, everything else is Python
// (a name, a wheel file or URL, a directory of wheels). Split separates the
// two; each kind has its own resolver in this package, and both keep what
// they download in one directory shared by every sandbox of the host
// (host.Config.PackageDir, by default Dir(cacheDir)), which they write
// concurrency-safely: a second start with the same directory downloads
// nothing. The sandbox gets read-only access to what it needs.
package packages
