// Command demoserver serves the small countries GraphQL API of the bridge's
// tests on loopback, for `make demo` and for trying the bridge offline:
//
//	go run ./plugins/graphql/internal/demoserver -addr 127.0.0.1:8787 -token demo-token
//
// It prints the endpoint's URL on stdout, then serves until killed. With
// -world it serves 75 countries (countries.NewWorld) instead of seven.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/parselbox/parselbox/plugins/graphql/internal/countries"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "the address to listen on (port 0: any free port)")
	token := flag.String("token", "", "if set, the bearer token that every request must carry")
	world := flag.Bool("world", false, "serve the larger world dataset (75 countries) instead of the seven of the tests")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	api := countries.New(*token)
	if *world {
		api = countries.NewWorld(*token)
	}
	mux.Handle("/graphql", api)
	fmt.Fprintf(os.Stdout, "http://%s/graphql\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
