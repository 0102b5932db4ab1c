// Command demoserver serves the pet store of package petstore on loopback,
// for `make demo`: the API under /api/v3 (its secured operations want the
// bearer token given with -token), the OpenAPI 3.1 document at
// /openapi.json and the 3.0 one at /openapi.yaml. When it listens, it
// prints its URL on stdout. It runs until it is killed. With -pets N it
// holds N generated pets (petstore.Seed, deterministic) instead of three.
//
//	go run ./plugins/http/internal/demoserver -token "$PETSTORE_TOKEN" [-pets 500]
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/parselbox/parselbox/plugins/http/internal/petstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen on `host:port`")
	token := flag.String("token", "", "the bearer `token` the API wants (none: no authentication)")
	pets := flag.Int("pets", 0, "hold `N` generated pets (deterministic) instead of the three of the tests")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "http://%s\n", ln.Addr())
	store := petstore.New(*token)
	if *pets > 0 {
		store = petstore.NewSeeded(*token, *pets)
	}
	log.Fatal(http.Serve(ln, store))
}
