package config

import (
	"errors"
	"testing"
)

// FuzzParse feeds any bytes to the loader in each syntax. It must not panic
// or hang; what it accepts must pass host.Config.Validate (the loader runs
// it); what it refuses must be *Error values naming the file. The seeds are
// in testdata/fuzz/FuzzParse (a file of each syntax and its mistakes); go
// test runs them.
func FuzzParse(f *testing.F) {
	f.Add([]byte("memory = 512\nbridge \"x\" {\n  plugin = \"x\"\n}\n"), uint8(0))
	f.Add([]byte("memory: 512\nmount:\n  data: {source: /d}\n"), uint8(1))
	f.Add([]byte(`{"server": {"port": 9000}, "allow_net": ["h:1"]}`), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, syntax uint8) {
		name := "p" + []string{".hcl", ".yaml", ".json"}[syntax%3]
		file, err := ParseFile(name, data)
		if err != nil {
			for _, e := range unjoin(err) {
				var ce *Error
				if !errors.As(e, &ce) || ce.File != name {
					t.Fatalf("error %q (%T) is not a *config.Error in %s", e, e, name)
				}
			}
			return
		}
		if err := file.Config.Validate(); err != nil {
			t.Fatalf("loaded a Config that Validate refuses: %v", err)
		}
		if err := file.Server.Validate(); err != nil {
			t.Fatalf("loaded settings that Validate refuses: %v", err)
		}
	})
}
