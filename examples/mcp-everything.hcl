# An MCP server started with npx (needs Node.js + npm and the npm
# registry): the reference "everything" server. Its tools are methods of
# the namespace `everything`. npx runs with a private HOME and npm cache
# under parselbox's cache directory.
#
#   bin/parselbox exec --config examples/mcp-everything.hcl \
#     'everything.echo(message="hi"), everything.get_sum(2, 3)'

mcp_server "everything" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"]
}
