package countries

import "testing"

func TestWorld(t *testing.T) {
	small := map[string]Country{}
	for _, c := range dataset() {
		small[c.Code] = *c
	}
	codes := map[string]bool{}
	for _, c := range world() {
		if codes[c.Code] || findContinent(c.Continent) == nil || c.Name == "" || c.Capital == "" || c.Population <= 0 || len(c.Languages) == 0 {
			t.Errorf("bad or repeated country %+v", *c)
		}
		codes[c.Code] = true
		if s, ok := small[c.Code]; ok && (s.Name != c.Name || s.Population != c.Population || s.Capital != c.Capital) {
			t.Errorf("%s differs from the small dataset: %+v, %+v", c.Code, s, *c)
		}
	}
	for code := range small {
		if !codes[code] {
			t.Errorf("%s of the small dataset is missing", code)
		}
	}
	if len(codes) != 75 {
		t.Errorf("%d countries, the comments say 75", len(codes))
	}
}
