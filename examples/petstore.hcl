# A REST API from its OpenAPI document: the public Swagger Petstore. Every
# operation becomes a method, its arguments checked against the spec; the
# requests leave from the host (the sandbox itself has no network).
#
#   bin/parselbox exec --config examples/petstore.hcl \
#     'pets = petstore.findPetsByStatus(status="available")["data"]
#   [p["name"] for p in pets[:5]]'
#   bin/parselbox exec --config examples/petstore.hcl 'petstore.search("order")'

bridge "petstore" {
  plugin = "http"
  config = {
    spec     = "https://petstore3.swagger.io/api/v3/openapi.json"
    base_url = "https://petstore3.swagger.io/api/v3"
    timeout  = "20s"
  }
}
