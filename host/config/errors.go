package config

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parselbox/parselbox/host"
)

// Error is one problem in a configuration, placed where the value at fault
// was set: a line of the file, or a flag. Load, LoadFile, Parse and
// ParseFile return it, or several joined with errors.Join (sorted by line);
// use errors.As to get the first. File.Locate places the problems that
// host.New finds later, a bridge's included.
type Error struct {
	// File is the file name as given to Load or Parse (or LoadFile or
	// ParseFile); empty when the value came from elsewhere.
	File string
	// Line is the 1-based line of the key at fault; 0 when unknown.
	Line int
	// Flag is the command-line flag (or the environment variable, as
	// $NAME) that set the value at fault, when it did not come from the
	// file.
	Flag string
	// Bridge names the bridge whose own check of its config block found
	// the problem; Key is then the path inside that block (config.KEY).
	Bridge string
	// Key is the path of the value at fault, in the file's terms:
	// `memory`, `allow_net[1]`, `bridge "greeter"`, `bridge "greeter".sha256`,
	// `server.port`. For an unknown key it is the enclosing block (empty at
	// the top level) and Msg names the key; for a syntax error it may be
	// empty.
	Key string
	// Msg says what is wrong.
	Msg string
}

// Error formats e as `file:line: key: msg` (or `--flag: key: msg`), leaving
// out what is unknown; a bridge's finding starts with `bridge "NAME": `.
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
	case e.Flag != "":
		s = e.Flag + ": " + s
	}
	if e.Bridge != "" {
		s = fmt.Sprintf("bridge %q: %s", e.Bridge, s)
	}
	return s
}

// origin is where a value was set: a line of a file, or a flag.
type origin struct {
	file string
	line int
	flag string
}

func (o origin) error(key, msg string) *Error {
	return &Error{File: o.file, Line: o.line, Flag: o.flag, Key: key, Msg: msg}
}

// errorList collects the problems found in one configuration.
type errorList []*Error

func (l *errorList) add(line int, key, format string, args ...any) {
	*l = append(*l, &Error{Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Error joins the list, so that a parser can return it.
func (l errorList) Error() string { return l.err().Error() }

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

// A keyError is a problem with one key: a *host.KeyError from Validate,
// or a bridge's own *sdk.ConfigError, whose key is the dotted path inside
// the bridge's config block ("auth.token", "servers.0.url").
type keyError interface {
	error
	ConfigKey() string
}

// A bridgeError names the bridge whose configuration was rejected. (The
// plugin manager's error for a configuration its bridge rejects; until it
// implements this, the "bridge "NAME": " its message starts with names
// the bridge.)
type bridgeError interface {
	error
	BridgeName() string
}

var bridgePrefix = regexp.MustCompile(`^bridge "((?:[^"\\]|\\.)*)": `)

// Locate places the problems in err that name a key of the configuration
// (host.Config.Validate's, the server settings', and those a bridge finds
// in its own config block and host.New passes on) where the value was set:
// `FILE:LINE: KEY: message`, `--flag: KEY: message`, or for a bridge
// `bridge "x": FILE:LINE: config.KEY: message`. Every other error, and
// nil, is returned as it is.
func (f *File) Locate(err error) error {
	if err == nil || f == nil {
		return err
	}
	var found errorList
	f.collect(err, "", &found)
	if len(found) == 0 {
		return err
	}
	return found.err()
}

// collect walks the tree of err for key errors, bridge tells the bridge
// whose error contains this one.
func (f *File) collect(err error, bridge string, out *errorList) {
	if b, ok := err.(bridgeError); ok {
		bridge = b.BridgeName()
	} else if m := bridgePrefix.FindStringSubmatch(err.Error()); m != nil {
		if name, uerr := strconv.Unquote(`"` + m[1] + `"`); uerr == nil {
			bridge = name
		}
	}
	if ke, ok := err.(keyError); ok {
		*out = append(*out, f.locate(ke, bridge))
		return
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			f.collect(e, bridge, out)
		}
	case interface{ Unwrap() error }:
		if e := u.Unwrap(); e != nil {
			f.collect(e, bridge, out)
		}
	}
}

// locate places one key error. A host.KeyError's key is the file's;
// another's, inside a bridge, is a dotted path in that bridge's config.
func (f *File) locate(ke keyError, bridge string) *Error {
	msg := strings.TrimPrefix(ke.Error(), ke.ConfigKey()+": ") // a host.KeyError's Message
	if _, isHost := ke.(*host.KeyError); isHost || bridge == "" {
		return f.sources[ke.ConfigKey()].error(ke.ConfigKey(), msg)
	}
	key, inner := bridgeKey(entry("bridge", bridge), ke.ConfigKey())
	e := f.sources[key].error(inner, msg)
	e.Bridge = bridge
	return e
}

// bridgeKey turns a bridge's dotted key ("auth.token", "servers.0.url" or
// "servers[0].url", as sdk.DecodeConfig writes it) into the file's key of
// that value (`bridge "x".config.servers[0].url`) and the key shown after
// the bridge's name (config.servers[0].url).
func bridgeKey(block, dotted string) (file, shown string) {
	shown = "config"
	dotted = strings.NewReplacer("[", ".", "]", "").Replace(dotted)
	for seg := range strings.SplitSeq(dotted, ".") {
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 {
			shown = index(shown, i)
		} else if seg != "" {
			shown = sub(shown, seg)
		}
	}
	return block + "." + shown, shown
}
