// Command shim is the smallest program that can confine a sandbox process
// (Spec.Shim): it links package confine, whose initialization does the work.
package main

import _ "github.com/parselbox/parselbox/host/confine"

func main() {} // never reached when started as the shim
