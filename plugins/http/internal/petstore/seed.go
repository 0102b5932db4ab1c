package petstore

import (
	"fmt"
	"math/rand/v2"
)

// Origins are the countries (ISO 3166-1 alpha-2 codes, all of them known
// to the GraphQL demo's world dataset) that seeded pets come from, each
// with its weight.
var Origins = []struct {
	Code   string
	Weight int
}{
	{"US", 14}, {"CA", 5}, {"MX", 5}, {"GB", 7}, {"DE", 7}, {"FR", 6}, {"IT", 4}, {"ES", 3},
	{"NL", 3}, {"PL", 2}, {"SE", 2}, {"BR", 5}, {"AR", 3}, {"CO", 2}, {"CL", 2}, {"PE", 1},
	{"JP", 5}, {"CN", 4}, {"IN", 4}, {"TH", 3}, {"KR", 2}, {"ID", 2}, {"VN", 1}, {"AU", 4},
	{"NZ", 2}, {"ZA", 3}, {"KE", 2}, {"EG", 2}, {"NG", 1}, {"MA", 1},
}

// Hubs are the shipping hubs a seeded pet goes through (the cities the MCP
// "everything" server's weather tool knows).
var Hubs = []string{"New York", "Chicago", "Los Angeles"}

var (
	seedCategories = []struct {
		name   string
		weight int
	}{{"Dogs", 35}, {"Cats", 30}, {"Birds", 12}, {"Fish", 10}, {"Rabbits", 8}, {"Reptiles", 5}}
	seedStatuses = []struct {
		name   string
		weight int
	}{{"available", 50}, {"pending", 15}, {"sold", 35}}
	seedTraits = []string{"friendly", "shy", "playful", "calm", "vaccinated", "house-trained", "senior", "young"}
	seedNames  = []string{
		"Max", "Bella", "Charlie", "Luna", "Cooper", "Daisy", "Milo", "Lucy", "Rocky", "Coco",
		"Oliver", "Nala", "Teddy", "Rosie", "Bear", "Ruby", "Leo", "Penny", "Toby", "Willow",
		"Jasper", "Olive", "Ziggy", "Pepper", "Finn", "Hazel", "Murphy", "Maple", "Oscar", "Ginger",
		"Bruno", "Mochi", "Simba", "Cleo", "Biscuit", "Pickles", "Nemo", "Kiwi", "Sunny", "Pumpkin",
		"Shadow", "Misty", "Gizmo", "Sasha", "Louie", "Honey", "Rusty", "Piper", "Ace", "Juniper",
	}
)

// Seed returns n pets generated deterministically (the same n gives the
// same pets on every run and platform): a name, a category, a photo URL,
// three tags ("origin:CC", "hub:CITY" and a trait) and a status, about half
// of them available, 15% pending and 35% sold.
func Seed(n int) []Pet {
	r := rand.New(rand.NewPCG(2026, 15))
	// pick draws an index in [0, count) with the given weights.
	pick := func(count int, weight func(int) int) int {
		total := 0
		for i := range count {
			total += weight(i)
		}
		x := r.IntN(total)
		for i := range count {
			if x -= weight(i); x < 0 {
				return i
			}
		}
		return count - 1
	}
	tagIDs := map[string]int64{}
	tag := func(name string) Tag {
		if _, ok := tagIDs[name]; !ok {
			tagIDs[name] = int64(len(tagIDs) + 1)
		}
		return Tag{ID: tagIDs[name], Name: name}
	}
	pets := make([]Pet, 0, n)
	for i := range n {
		id := int64(i + 1)
		c := pick(len(seedCategories), func(i int) int { return seedCategories[i].weight })
		o := Origins[pick(len(Origins), func(i int) int { return Origins[i].Weight })].Code
		pets = append(pets, Pet{
			ID:        id,
			Name:      seedNames[r.IntN(len(seedNames))],
			Category:  &Category{ID: int64(c + 1), Name: seedCategories[c].name},
			PhotoURLs: []string{fmt.Sprintf("https://img.petstore.example/pets/%d.jpg", id)},
			Tags: []Tag{
				tag("origin:" + o),
				tag("hub:" + Hubs[r.IntN(len(Hubs))]),
				tag(seedTraits[r.IntN(len(seedTraits))]),
			},
			Status: seedStatuses[pick(len(seedStatuses), func(i int) int { return seedStatuses[i].weight })].name,
		})
	}
	return pets
}
