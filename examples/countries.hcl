# A GraphQL API: the public countries API (no key needed).
#
#   bin/parselbox exec --config examples/countries.hcl \
#     'gql.graphql("query($c: ID!) { country(code: $c) { name capital } }", {"c": "FR"})["data"]'
#   bin/parselbox exec --config examples/countries.hcl 'gql.search("continent")'

bridge "gql" {
  plugin = "graphql"
  config = {
    endpoint = "https://countries.trevorblades.com/graphql"
    timeout  = "20s"
  }
}
