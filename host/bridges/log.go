package bridges

// Keys of the manager's log lines.
const (
	logKeyBridge   = "bridge"
	logKeyPath     = "path"
	logKeyPid      = "pid"
	logKeyError    = "error"
	logKeyAttempt  = "attempt"
	logKeyDelay    = "delay"
	logKeyDuration = "duration"
)
