# The MCP servers of an mcp.json (the file MCP clients share), each a
# namespace. The same file may also launch parselbox itself: that entry is
# left out (the loopback guard). `--mcp examples/mcp.json` does the same.
#
#   bin/parselbox exec --config examples/mcp-json.hcl 'everything.echo(message="hi")'

mcp = "mcp.json"
