# A shell on the host, as a namespace: commands run outside the sandbox, in
# a directory of your choice, with a timeout. Think twice before giving it
# to an agent.
#
#   bin/parselbox exec --config examples/shell.hcl 'sh.exec("echo hi from $0")["stdout"]'

bridge "sh" {
  plugin = "shell"
  config = {
    command = "bash"
    cwd     = "/tmp"
    timeout = "30s"
  }
}
