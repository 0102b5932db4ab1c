//go:build !linux

package sandbox

import "github.com/hashicorp/go-hclog"

// lowerHelperPriority is Linux only (threads are reniced through /proc).
func lowerHelperPriority(int, hclog.Logger) {}
