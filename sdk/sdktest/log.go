package sdktest

import (
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/internal/testenv"
)

// Logger returns an hclog logger that writes to t.Log at debug level, and
// drops what is logged after the test has ended (go-plugin's goroutines may
// log late).
func Logger(t testing.TB) hclog.Logger { return testenv.Logger(t) }
