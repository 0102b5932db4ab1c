// Package countries is a small, real GraphQL API (continents and countries)
// for the GraphQL bridge's tests and demo. It is built with graphql-go, so
// validation, errors and introspection are a real server's; it is never
// part of the bridge binary.
//
// The schema has queries with arguments, nested and recursive object types,
// an input type, an enum with a default value, a deprecated field, a
// mutation, and resolvers that fail. The field authorization echoes the
// request's Authorization header, as a careless server might: the bridge
// must keep it from the sandbox.
package countries

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/graphql-go/graphql"
)

// Country is a country of the dataset. graphql-go's default resolver reads
// the GraphQL fields of the same names from it (and from a continent).
type Country struct {
	Code       string
	Name       string
	Capital    string
	Population int
	Continent  string // continent code
	Languages  []string
}

type continent struct{ Code, Name string }

var continents = []*continent{
	{"AF", "Africa"}, {"AS", "Asia"}, {"EU", "Europe"},
	{"NA", "North America"}, {"OC", "Oceania"}, {"SA", "South America"},
}

// dataset is the tests' seven countries, taken from world.
func dataset() []*Country {
	return slices.DeleteFunc(world(), func(c *Country) bool {
		return !slices.Contains([]string{"AU", "BR", "DE", "FR", "JP", "KE", "US"}, c.Code)
	})
}

// Server is the API over an in-memory dataset; mutations change it.
type Server struct {
	token  string
	schema graphql.Schema

	mu        sync.Mutex
	countries []*Country
}

// New returns a server with a fresh dataset. With a token, every request
// must carry "Authorization: Bearer TOKEN"; others get HTTP 401 with a
// GraphQL error.
func New(token string) *Server { return newServer(token, dataset()) }

func newServer(token string, countries []*Country) *Server {
	s := &Server{token: token, countries: countries}
	schema, err := s.buildSchema()
	if err != nil {
		panic(fmt.Sprintf("countries: schema: %v", err))
	}
	s.schema = schema
	return s
}

type authKey struct{}

// ServeHTTP serves GraphQL over HTTP: POST a JSON {query, variables,
// operationName}; the answer is a JSON {data, errors}.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a GraphQL request", http.StatusMethodNotAllowed)
		return
	}
	auth := r.Header.Get("Authorization")
	if s.token != "" && auth != "Bearer "+s.token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"data": nil, "errors": []any{map[string]any{"message": "unauthorized: a valid bearer token is required"}}})
		return
	}
	var req struct {
		Query         string         `json:"query"`
		Variables     map[string]any `json:"variables"`
		OperationName string         `json:"operationName"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": []any{map[string]any{"message": "the body is not a GraphQL request: " + err.Error()}}})
		return
	}
	res := graphql.Do(graphql.Params{
		Schema:         s.schema,
		RequestString:  req.Query,
		VariableValues: req.Variables,
		OperationName:  req.OperationName,
		Context:        context.WithValue(r.Context(), authKey{}, auth),
	})
	writeJSON(w, http.StatusOK, res)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) find(code string) *Country {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.countries {
		if strings.EqualFold(c.Code, code) {
			return c
		}
	}
	return nil
}

func (s *Server) all() []*Country {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.countries)
}

func findContinent(code string) *continent {
	for _, c := range continents {
		if strings.EqualFold(c.Code, code) {
			return c
		}
	}
	return nil
}

func (s *Server) buildSchema() (graphql.Schema, error) {
	var countryType *graphql.Object
	continentType := graphql.NewObject(graphql.ObjectConfig{
		Name:        "Continent",
		Description: "One of the six inhabited continents.",
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			return graphql.Fields{
				"code": {Type: graphql.NewNonNull(graphql.ID), Description: "Two-letter code, such as EU."},
				"name": {Type: graphql.NewNonNull(graphql.String)},
				"countries": {Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(countryType))), Description: "The continent's countries.",
					Resolve: func(p graphql.ResolveParams) (any, error) {
						code := p.Source.(*continent).Code
						var out []*Country
						for _, c := range s.all() {
							if c.Continent == code {
								out = append(out, c)
							}
						}
						return out, nil
					}},
			}
		}),
	})
	countryType = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Country",
		Description: "A country, with its capital and population.",
		Fields: graphql.Fields{
			"code":       {Type: graphql.NewNonNull(graphql.ID), Description: "ISO 3166-1 alpha-2 code, such as FR."},
			"name":       {Type: graphql.NewNonNull(graphql.String)},
			"capital":    {Type: graphql.String},
			"population": {Type: graphql.Int, Description: "Inhabitants, rounded to millions."},
			"languages":  {Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(graphql.String)))},
			"continent": {Type: graphql.NewNonNull(continentType),
				Resolve: func(p graphql.ResolveParams) (any, error) { return findContinent(p.Source.(*Country).Continent), nil }},
			"capitalCity": {Type: graphql.String, DeprecationReason: "Use capital.",
				Resolve: func(p graphql.ResolveParams) (any, error) { return p.Source.(*Country).Capital, nil }},
		},
	})
	sortType := graphql.NewEnum(graphql.EnumConfig{
		Name:        "Sort",
		Description: "The order of a list of countries.",
		Values: graphql.EnumValueConfigMap{
			"NAME":       {Value: "NAME", Description: "By name, A to Z."},
			"POPULATION": {Value: "POPULATION", Description: "By population, largest first."},
		},
	})
	filterType := graphql.NewInputObject(graphql.InputObjectConfig{
		Name:        "CountryFilter",
		Description: "Which countries to list.",
		Fields: graphql.InputObjectConfigFieldMap{
			"continent":    {Type: graphql.ID, Description: "Only countries of this continent (code)."},
			"nameContains": {Type: graphql.String, Description: "Only countries whose name contains this text."},
		},
	})
	newCountryType := graphql.NewInputObject(graphql.InputObjectConfig{
		Name:        "NewCountry",
		Description: "A country to add.",
		Fields: graphql.InputObjectConfigFieldMap{
			"code":       {Type: graphql.NewNonNull(graphql.ID)},
			"name":       {Type: graphql.NewNonNull(graphql.String)},
			"continent":  {Type: graphql.NewNonNull(graphql.ID), Description: "Continent code."},
			"capital":    {Type: graphql.String},
			"population": {Type: graphql.Int},
		},
	})
	query := graphql.NewObject(graphql.ObjectConfig{
		Name: "Query",
		Fields: graphql.Fields{
			"continents": {Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(continentType))), Description: "All continents.",
				Resolve: func(graphql.ResolveParams) (any, error) { return continents, nil }},
			"continent": {Type: continentType, Description: "A continent by its code; null when there is none.",
				Args: graphql.FieldConfigArgument{"code": {Type: graphql.NewNonNull(graphql.ID)}},
				Resolve: func(p graphql.ResolveParams) (any, error) {
					if c := findContinent(p.Args["code"].(string)); c != nil {
						return c, nil
					}
					return nil, nil
				}},
			"country": {Type: countryType, Description: "A country by its code; an error when there is none.",
				Args: graphql.FieldConfigArgument{"code": {Type: graphql.NewNonNull(graphql.ID), Description: "ISO code, such as FR."}},
				Resolve: func(p graphql.ResolveParams) (any, error) {
					code := p.Args["code"].(string)
					if c := s.find(code); c != nil {
						return c, nil
					}
					return nil, fmt.Errorf("no country with code %q", code)
				}},
			"countries": {Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(countryType))), Description: "Countries, filtered and sorted.",
				Args: graphql.FieldConfigArgument{
					"filter": {Type: filterType},
					"sort":   {Type: sortType, DefaultValue: "NAME"},
				},
				Resolve: func(p graphql.ResolveParams) (any, error) {
					f, _ := p.Args["filter"].(map[string]any)
					cont, _ := f["continent"].(string)
					part, _ := f["nameContains"].(string)
					var out []*Country
					for _, c := range s.all() {
						if (cont == "" || strings.EqualFold(c.Continent, cont)) && strings.Contains(strings.ToLower(c.Name), strings.ToLower(part)) {
							out = append(out, c)
						}
					}
					if p.Args["sort"] == "POPULATION" {
						slices.SortStableFunc(out, func(a, b *Country) int { return b.Population - a.Population })
					} else {
						slices.SortStableFunc(out, func(a, b *Country) int { return strings.Compare(a.Name, b.Name) })
					}
					return out, nil
				}},
			"authorization": {Type: graphql.String, Description: "Echoes the Authorization header of the request (a careless server).",
				Resolve: func(p graphql.ResolveParams) (any, error) { return p.Context.Value(authKey{}), nil }},
		},
	})
	mutation := graphql.NewObject(graphql.ObjectConfig{
		Name: "Mutation",
		Fields: graphql.Fields{
			"addCountry": {Type: graphql.NewNonNull(countryType), Description: "Adds a country to a continent.",
				Args: graphql.FieldConfigArgument{"input": {Type: graphql.NewNonNull(newCountryType)}},
				Resolve: func(p graphql.ResolveParams) (any, error) {
					in := p.Args["input"].(map[string]any)
					c := &Country{Code: strings.ToUpper(in["code"].(string)), Name: in["name"].(string), Continent: strings.ToUpper(in["continent"].(string))}
					c.Capital, _ = in["capital"].(string)
					c.Population, _ = in["population"].(int)
					if findContinent(c.Continent) == nil {
						return nil, fmt.Errorf("no continent with code %q", c.Continent)
					}
					s.mu.Lock()
					defer s.mu.Unlock()
					for _, o := range s.countries {
						if o.Code == c.Code {
							return nil, fmt.Errorf("country %q exists already", c.Code)
						}
					}
					s.countries = append(s.countries, c)
					return c, nil
				}},
		},
	})
	return graphql.NewSchema(graphql.SchemaConfig{Query: query, Mutation: mutation})
}
