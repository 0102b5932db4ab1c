package sdk

import "strings"

// PythonName is how a tool's dotted name appears in the sandbox's Python:
// in each segment, every character that cannot be in an identifier becomes
// "_" (and a leading digit gets a "_" before it); a segment that is a Python
// keyword, or "task" (the accessor that starts a background call), gets a
// trailing "_". So "get-user" is get_user, "2fa" is _2fa, "import" is
// import_, and a tool named "task" is called as ns.task_(). The host
// resolves a call by this name or by the tool's own.
func PythonName(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		var b strings.Builder
		for j, c := range p {
			switch {
			case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9':
				b.WriteRune(c)
			case c >= '0' && c <= '9': // a leading digit
				b.WriteByte('_')
				b.WriteRune(c)
			default:
				b.WriteByte('_')
			}
		}
		s := b.String()
		if s == "task" || IsPythonKeyword(s) {
			s += "_"
		}
		parts[i] = s
	}
	return strings.Join(parts, ".")
}

// IsPythonKeyword reports whether s is one of Python's keywords, which
// cannot be attribute names in Python code.
func IsPythonKeyword(s string) bool { return pythonKeywords[s] }

var pythonKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true,
	"def": true, "del": true, "elif": true, "else": true, "except": true, "finally": true,
	"for": true, "from": true, "global": true, "if": true, "import": true, "in": true,
	"is": true, "lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true,
	"raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}
