// Package petstore is a small in-memory pet store served over HTTP, after
// the Swagger Petstore, with its OpenAPI documents (3.0 and 3.1). The HTTP
// bridge's tests and its demo (package demoserver) talk to it.
package petstore

import (
	_ "embed"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Spec30 is the store's OpenAPI 3.0 document (YAML); its server URL is
// https://petstore.example.com/api/v3, so a bridge must be given base_url.
//
//go:embed petstore-3.0.yaml
var Spec30 []byte

// Spec31 is the store's OpenAPI 3.1 document (JSON); its server URL is the
// relative "/api/v3", resolved against the URL it is loaded from.
//
//go:embed petstore-3.1.json
var Spec31 []byte

// Prefix is the path under which the API is served.
const Prefix = "/api/v3"

// Pet is a pet of the store.
type Pet struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Category  *Category `json:"category,omitempty"`
	PhotoURLs []string  `json:"photoUrls"`
	Tags      []Tag     `json:"tags,omitempty"`
	Status    string    `json:"status,omitempty"`
}

// Category is a pet's category.
type Category struct {
	ID   int64  `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// Tag is a pet's tag.
type Tag struct {
	ID   int64  `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// Store serves the pet store API under Prefix, the 3.0 document at
// /openapi.yaml and the 3.1 document at /openapi.json. Create it with New.
type Store struct {
	token string
	mux   *http.ServeMux

	mu   sync.Mutex
	pets map[int64]Pet
	next int64
}

// New returns a store holding three pets. When token is not empty, the
// operations that the documents secure answer 401 unless the request has
// the header "Authorization: Bearer <token>".
func New(token string) *Store {
	return newStore(token, []Pet{
		{ID: 1, Name: "doggie", Category: &Category{ID: 1, Name: "Dogs"}, PhotoURLs: []string{}, Tags: []Tag{{ID: 1, Name: "friendly"}}, Status: "available"},
		{ID: 2, Name: "kitty", Category: &Category{ID: 2, Name: "Cats"}, PhotoURLs: []string{}, Tags: []Tag{{ID: 2, Name: "shy"}}, Status: "pending"},
		{ID: 3, Name: "rex", Category: &Category{ID: 1, Name: "Dogs"}, PhotoURLs: []string{}, Tags: []Tag{{ID: 1, Name: "friendly"}}, Status: "sold"},
	})
}

// NewSeeded returns a store like New's holding the n pets of Seed instead
// of three.
func NewSeeded(token string, n int) *Store { return newStore(token, Seed(n)) }

func newStore(token string, pets []Pet) *Store {
	s := &Store{token: token, mux: http.NewServeMux(), pets: map[int64]Pet{}, next: 1}
	for _, p := range pets {
		s.pets[p.ID] = p
		s.next = max(s.next, p.ID+1)
	}
	s.mux.HandleFunc("GET /openapi.yaml", document(Spec30, "application/yaml"))
	s.mux.HandleFunc("GET /openapi.json", document(Spec31, "application/json"))
	s.handle("GET /pet/{petId}", true, s.getPet)
	s.handle("DELETE /pet/{petId}", true, s.deletePet)
	s.handle("POST /pet", true, s.putPet(false))
	s.handle("PUT /pet", true, s.putPet(true))
	s.handle("GET /pet/findByStatus", true, s.findByStatus)
	s.handle("GET /pet/findByTags", true, s.findByTags)
	s.handle("GET /store/inventory", true, s.inventory)
	s.handle("POST /store/order", true, s.placeOrder)
	s.handle("GET /health", false, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok")
	})
	s.handle("GET /version", false, func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, map[string]string{"version": "1.0.0"})
	})
	s.handle("/echo", false, echo)
	s.handle("/echo/", false, echo)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Store) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Store) handle(pattern string, secured bool, h http.HandlerFunc) {
	i := strings.IndexByte(pattern, '/') // Prefix goes before the path
	s.mux.HandleFunc(pattern[:i]+Prefix+pattern[i:], func(w http.ResponseWriter, r *http.Request) {
		if secured && s.token != "" && r.Header.Get("Authorization") != "Bearer "+s.token {
			reply(w, http.StatusUnauthorized, apiError{Code: 401, Message: "unauthorized"})
			return
		}
		h(w, r)
	})
}

func document(body []byte, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	}
}

type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Store) getPet(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("petId"), 10, 64)
	if err != nil {
		reply(w, http.StatusBadRequest, apiError{Code: 400, Message: "Invalid ID supplied"})
		return
	}
	s.mu.Lock()
	p, ok := s.pets[id]
	s.mu.Unlock()
	if !ok {
		reply(w, http.StatusNotFound, apiError{Code: 404, Message: "Pet not found"})
		return
	}
	reply(w, http.StatusOK, p)
}

func (s *Store) deletePet(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("petId"), 10, 64)
	if err != nil {
		reply(w, http.StatusBadRequest, apiError{Code: 400, Message: "Invalid ID supplied"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pets[id]; !ok {
		reply(w, http.StatusNotFound, apiError{Code: 404, Message: "Pet not found"})
		return
	}
	delete(s.pets, id)
	w.WriteHeader(http.StatusOK)
}

func (s *Store) putPet(update bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var p Pet
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil || p.Name == "" {
			reply(w, http.StatusBadRequest, apiError{Code: 400, Message: "Invalid input"})
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if update {
			if _, ok := s.pets[p.ID]; !ok {
				reply(w, http.StatusNotFound, apiError{Code: 404, Message: "Pet not found"})
				return
			}
		} else if p.ID == 0 {
			p.ID = s.next
			s.next++
		}
		if p.PhotoURLs == nil {
			p.PhotoURLs = []string{}
		}
		s.pets[p.ID] = p
		reply(w, http.StatusOK, p)
	}
}

// matching lists the pets for which keep is true, by id.
func (s *Store) matching(keep func(Pet) bool) []Pet {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Pet{}
	for _, id := range slices.Sorted(maps.Keys(s.pets)) {
		if keep(s.pets[id]) {
			out = append(out, s.pets[id])
		}
	}
	return out
}

func (s *Store) findByStatus(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	pets := s.matching(func(p Pet) bool { return p.Status == status })
	if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n < len(pets) {
		pets = pets[:n]
	}
	reply(w, http.StatusOK, pets)
}

func (s *Store) findByTags(w http.ResponseWriter, r *http.Request) {
	want := r.URL.Query()["tags"]
	reply(w, http.StatusOK, s.matching(func(p Pet) bool {
		return slices.ContainsFunc(p.Tags, func(t Tag) bool { return slices.Contains(want, t.Name) })
	}))
}

func (s *Store) inventory(w http.ResponseWriter, _ *http.Request) {
	counts := map[string]int{}
	for _, p := range s.matching(func(Pet) bool { return true }) {
		counts[p.Status]++
	}
	reply(w, http.StatusOK, counts)
}

func (s *Store) placeOrder(w http.ResponseWriter, r *http.Request) {
	var order map[string]any
	if err := json.NewDecoder(r.Body).Decode(&order); err != nil {
		reply(w, http.StatusBadRequest, apiError{Code: 400, Message: "Invalid input"})
		return
	}
	order["id"] = 1
	order["status"] = "placed"
	reply(w, http.StatusOK, order)
}

// echo answers, under /echo and /echo/..., with what it received: method,
// path, query, headers (all of them, as a careless server might) and body.
func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[k] = strings.Join(v, ", ")
	}
	reply(w, http.StatusOK, map[string]any{
		"method":  r.Method,
		"path":    r.URL.Path,
		"query":   r.URL.Query(),
		"headers": headers,
		"body":    string(body),
	})
}
