package petstore

import (
	"reflect"
	"strings"
	"testing"
)

func TestSeed(t *testing.T) {
	pets := Seed(500)
	if len(pets) != 500 || !reflect.DeepEqual(pets, Seed(500)) {
		t.Fatalf("Seed(500) gave %d pets, or not the same pets twice", len(pets))
	}
	statuses := map[string]int{}
	for i, p := range pets {
		if p.ID != int64(i+1) || p.Name == "" || p.Category == nil || len(p.PhotoURLs) != 1 || len(p.Tags) != 3 {
			t.Fatalf("pet %d is incomplete: %+v", i, p)
		}
		if !strings.HasPrefix(p.Tags[0].Name, "origin:") || !strings.HasPrefix(p.Tags[1].Name, "hub:") {
			t.Fatalf("pet %d has no origin and hub tags: %+v", p.ID, p.Tags)
		}
		statuses[p.Status]++
	}
	if len(statuses) != 3 || statuses["sold"] < 100 {
		t.Errorf("statuses: %v", statuses)
	}
	if s := NewSeeded("", 10); len(s.pets) != 10 || s.next != 11 {
		t.Errorf("NewSeeded(10): %d pets, next id %d", len(s.pets), s.next)
	}
}
