// Package fleet runs a fleet of parselbox hosts on this machine, for real:
// three `parselbox --transport http` processes on loopback behind Debian's
// HAProxy with deploy/haproxy/haproxy.cfg, driven by MCP clients (the
// go-sdk's). It is built only with the fleet tag: `make fleet-test`
// installs haproxy if it is missing and runs it (CI does too). Without
// haproxy the test skips, unless PARSELBOX_REQUIRE_FLEET is set.
package fleet
