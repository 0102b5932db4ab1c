package main

import "github.com/parselbox/parselbox/sdk"

func main() {
	sdk.Serve(newBridge())
}
