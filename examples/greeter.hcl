# The sdk's example bridge, built by `make build` next to bin/parselbox.
#
#   bin/parselbox exec --config examples/greeter.hcl 'greeter.greet(name="ada")'
#   # {"output":"hello, ada",...}

bridge "greeter" {
  plugin = "greeter"
  config = { greeting = "hello" }
}
