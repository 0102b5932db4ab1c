package packages

// SetMaxDownload sets the most one download may be, for a test; restore
// sets it back. Not for parallel tests: the limit is the package's.
func SetMaxDownload(n int64) (restore func()) {
	old := maxDownload
	maxDownload = n
	return func() { maxDownload = old }
}
