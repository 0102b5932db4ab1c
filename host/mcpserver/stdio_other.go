//go:build !unix

package mcpserver

import (
	"io"
	"os"
)

// pollable is a blocking read where there is no O_NONBLOCK.
func pollable(*os.File) (io.ReadCloser, func(), bool) { return nil, nil, false }
