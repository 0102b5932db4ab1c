// Command schemagen writes parselbox.schema.json, the JSON Schema of the
// configuration, from the Go types and their doc comments:
//
//	go generate ./host/config
//
// A test in host/config fails when the committed file is out of date.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parselbox/parselbox/host/config"
	"github.com/parselbox/parselbox/host/config/internal/godoc"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: schemagen MODULE_ROOT OUTPUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(root, output string) error {
	docs, err := godoc.FieldDocs(filepath.Join(root, "host"), filepath.Join(root, "host", "mcpserver"))
	if err != nil {
		return err
	}
	b, err := config.JSONSchema(docs)
	if err != nil {
		return err
	}
	return os.WriteFile(output, b, 0o644)
}
