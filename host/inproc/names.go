package inproc

import (
	"strings"
	"unicode"

	"github.com/parselbox/parselbox/sdk"
)

// toolName turns a Go identifier into the name the sandbox sees: snake_case
// ("GetWeather" → "get_weather", "GetURL" → "get_url", "ListIDs" →
// "list_ids"), with a trailing underscore when the result is a Python keyword
// or "task", which the sandbox's namespace proxies reserve for starting
// background calls ("Import" → "import_", "Task" → "task_").
func toolName(goName string) string {
	s := snake(goName)
	if s == "task" || sdk.IsPythonKeyword(s) {
		s += "_"
	}
	return s
}

// snake converts a Go identifier to snake_case. An acronym stays one word,
// also when a plural "s" follows it.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i, c := range r {
		if !unicode.IsUpper(c) {
			b.WriteRune(c)
			continue
		}
		if i > 0 && r[i-1] != '_' && startsWord(r, i) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// startsWord reports whether the upper-case rune r[i] (i > 0) begins a new
// word.
func startsWord(r []rune, i int) bool {
	prev := r[i-1]
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	if !unicode.IsUpper(prev) || i+1 >= len(r) || !unicode.IsLower(r[i+1]) {
		return false
	}
	// "HTTPServer": the S of Server starts a word; "ListIDs", "IDsOf": the
	// s after ID is a plural, not a word.
	pluralS := r[i+1] == 's' && (i+2 == len(r) || !unicode.IsLower(r[i+2]))
	return !pluralS
}
