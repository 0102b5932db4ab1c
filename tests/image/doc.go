// Package image tests the OCI image `make image` builds: it unpacks the
// image's root filesystem and runs `parselbox exec` in it, chrooted, in a
// mount and PID namespace of its own (unshare), as the image's non-root
// user, so that nothing of this machine's files is within reach. Built
// with the image tag: `make image-test` (CI runs it).
package image
