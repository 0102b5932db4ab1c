package config_test

import (
	"errors"
	"fmt"

	"github.com/parselbox/parselbox/host/config"
)

func ExampleParse() {
	cfg, err := config.Parse("/etc/parselbox/parselbox.hcl", []byte(`
memory  = 1024
timeout = 0

mount "data" {
  source = "data"
}

bridge "github" {
  plugin = "http"
  config = { retries = 3 }
}
`))
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Memory, cfg.Timeout < 0, cfg.Mounts["data"], cfg.Bridges["github"].Config)
	// Output: 1024 true {/etc/parselbox/data ro} map[retries:3]
}

func ExampleError() {
	_, err := config.Parse("parselbox.yaml", []byte(`
memory: 1024
bridge:
  greeter:
    plugn: greeter
`))
	fmt.Println(err)
	var ce *config.Error
	if errors.As(err, &ce) {
		fmt.Printf("line %d, key %s\n", ce.Line, ce.Key)
	}
	// Output:
	// parselbox.yaml:4: bridge "greeter": missing key "plugin"
	// parselbox.yaml:5: bridge "greeter": unknown key "plugn" (did you mean "plugin"?)
	// line 4, key bridge "greeter"
}

func ExampleParseFile() {
	f, err := config.ParseFile("parselbox.hcl", []byte(`
memory = 1024

server {
  transport    = "http"
  idle_timeout = 90
  pool_size    = 0
}
`))
	if err != nil {
		panic(err)
	}
	s := f.Server
	fmt.Println(f.Config.Memory, s.Transport, s.IdleTimeout, s.PoolSize, s.Port) // the port is the default
	// Output: 1024 http 1m30s 0 9000
}
