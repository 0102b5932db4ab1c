package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Error is one problem in a configuration. Load, LoadFile, Parse and
// ParseFile return it, or several joined with errors.Join (sorted by line);
// use errors.As to get the first.
type Error struct {
	// File is the file name as given to Load or Parse (or LoadFile or
	// ParseFile); empty from Validate.
	File string
	// Line is the 1-based line of the key at fault; 0 when unknown.
	Line int
	// Key is the path of the value at fault, in the file's terms:
	// `memory`, `allow_net[1]`, `bridge "greeter"`, `bridge "greeter".sha256`,
	// `server.port`. For an unknown key it is the enclosing block (empty at
	// the top level) and Msg names the key; for a syntax error it may be
	// empty.
	Key string
	// Msg says what is wrong.
	Msg string
}

// Error formats e as `file:line: key: msg`, leaving out what is unknown.
func (e *Error) Error() string {
	s := e.Msg
	if e.Key != "" {
		s = e.Key + ": " + s
	}
	switch {
	case e.File != "" && e.Line > 0:
		s = fmt.Sprintf("%s:%d: %s", e.File, e.Line, s)
	case e.File != "":
		s = e.File + ": " + s
	}
	return s
}

// errorList collects the problems found in one configuration.
type errorList []*Error

func (l *errorList) add(line int, key, format string, args ...any) {
	*l = append(*l, &Error{Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// in sets the file name of every error.
func (l errorList) in(file string) errorList {
	for _, e := range l {
		e.File = file
	}
	return l
}

// err sorts the list by line and joins it, or returns nil when it is empty.
func (l errorList) err() error {
	slices.SortStableFunc(l, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// Key paths, as Error.Key writes them.

// sub is the key name inside path: `bridge "x".plugin`.
func sub(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// entry is the entry named by the user inside path: `bridge "x"`.
func entry(path, name string) string { return fmt.Sprintf("%s %q", path, name) }

// index is element i of the list at path: `allow_net[1]`.
func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }
