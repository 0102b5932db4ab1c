package sandbox

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// message is one line of the host ↔ sandbox protocol: a request (ID and
// Method), a notification (Method only) or a response (ID with Result or
// Error). Decoded from the sandbox, its raw parts alias the line they were
// read from: nothing is copied that nobody looks into.
type message struct {
	ID     *int64          `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

func (m *message) isResponse() bool { return m.ID != nil && m.Method == "" }

// errProtocol marks a line from the sandbox that is not a protocol message.
var errProtocol = errors.New("not a protocol message")

// decodeMessage decodes one line from the sandbox, strictly: a JSON object
// with only the members of a message, each at most once and of its type,
// forming a request, a notification or a response with exactly one of
// result and error.
func decodeMessage(line []byte) (*message, error) {
	if !json.Valid(line) {
		return nil, fmt.Errorf("%w: not valid JSON", errProtocol)
	}
	var m message
	var hasResult bool
	err := members(line, func(key string, val []byte) error {
		switch key {
		case "id":
			id, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil {
				return fmt.Errorf("id %s is not an integer", clip(val))
			}
			m.ID = &id
		case "method":
			if err := json.Unmarshal(val, &m.Method); err != nil || m.Method == "" {
				return fmt.Errorf("method %s is not a name", clip(val))
			}
		case "params":
			m.Params = val
		case "result":
			m.Result, hasResult = val, true
		case "error":
			e, err := decodeError(val)
			if err != nil || e == nil {
				return fmt.Errorf("error: %w", errors.Join(err, errors.New("not an error object")))
			}
			m.Error = e
		default:
			return fmt.Errorf("unknown member %q", key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errProtocol, err)
	}
	switch {
	case m.Method != "" && (hasResult || m.Error != nil):
		return nil, fmt.Errorf("%w: a request with a result or an error", errProtocol)
	case m.Method == "" && m.ID == nil:
		return nil, fmt.Errorf("%w: neither a method nor an id", errProtocol)
	case m.Method == "" && hasResult == (m.Error != nil):
		return nil, fmt.Errorf("%w: a response needs exactly one of result and error", errProtocol)
	}
	return &m, nil
}

// decodeError decodes {type, message, traceback?}, part of valid JSON;
// null is no error.
func decodeError(val []byte) (*Error, error) {
	if string(val) == "null" {
		return nil, nil
	}
	var e Error
	seen := false
	err := members(val, func(key string, v []byte) error {
		var dst *string
		switch key {
		case "type":
			dst, seen = &e.Type, true
		case "message":
			dst = &e.Message
		case "traceback":
			dst = &e.Traceback
		default:
			return fmt.Errorf("unknown member %q", key)
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%s is not a string", key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !seen || e.Type == "" {
		return nil, errors.New("no type")
	}
	return &e, nil
}

// decodeResult decodes an execution's result strictly; Output aliases raw,
// which is valid JSON (the result of a decoded message).
func decodeResult(raw []byte) (*Result, error) {
	var r Result
	var hasOutput bool
	err := members(raw, func(key string, val []byte) error {
		var err error
		switch key {
		case "output":
			r.Output, hasOutput = val, true
		case "stdout":
			r.Stdout, err = decodeString(val)
		case "stderr":
			r.Stderr, err = decodeString(val)
		case "view":
			err = json.Unmarshal(val, &r.View)
		case "files":
			switch string(val) {
			case "null":
				return errors.New("files is null")
			case "[]": // most executions write no file
				r.Files = []string{}
			default:
				err = json.Unmarshal(val, &r.Files)
			}
		case "error":
			r.Error, err = decodeError(val)
		default:
			return fmt.Errorf("unknown member %q", key)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !hasOutput {
		return nil, errors.New("no output")
	}
	if r.Files == nil {
		r.Files = []string{}
	}
	return &r, nil
}

// decodeString decodes a JSON string, part of valid JSON: without escapes
// and in valid UTF-8 (as the empty stdout and stderr of most executions),
// its bytes are the string; otherwise encoding/json decodes it.
func decodeString(val []byte) (string, error) {
	if len(val) >= 2 && val[0] == '"' {
		raw := val[1 : len(val)-1]
		if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
			return string(raw), nil
		}
	}
	var s string
	err := json.Unmarshal(val, &s)
	return s, err
}

// members calls fn with each member of the JSON object b, in order: its key
// (unescaped) and its value (a sub-slice of b). b must be valid JSON (a
// line that decodeMessage validated whole, or a part of one); a key may
// appear once.
func members(b []byte, fn func(key string, val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errors.New("not a JSON object")
	}
	var seen []string // a handful of keys: a slice beats a map
	i = skipSpace(b, i+1)
	if b[i] == '}' {
		return nil
	}
	for {
		end := skipValue(b, i) // the key: a string
		var key string
		if raw := b[i+1 : end-1]; bytes.IndexByte(raw, '\\') < 0 {
			key = string(raw) // no escapes: the bytes are the key
		} else if err := json.Unmarshal(b[i:end], &key); err != nil {
			return err
		}
		if slices.Contains(seen, key) {
			return fmt.Errorf("member %q appears twice", key)
		}
		seen = append(seen, key)
		i = skipSpace(b, skipSpace(b, end)+1) // past ':'
		end = skipValue(b, i)
		if err := fn(key, b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if b[i] == '}' {
			return nil
		}
		i = skipSpace(b, i+1) // past ','
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i]; b is valid.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return i
			}
		}
		return i
	}
}

func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// clip shortens a value for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// keyLength is the length of the channel key: 128 random bits, in hex.
const keyLength = 32

// newChannelKey makes the key of one process's channel. The runner starts
// every line it writes with it; guest code that shares the runner's
// process (JS through node:fs, a Worker) can write to its stdout too, but
// never learns the key: a line without it is guest text, never a message.
func newChannelKey() string {
	b := make([]byte, keyLength/2)
	if _, err := rand.Read(b); err != nil {
		panic("sandbox: no randomness for the channel key: " + err.Error()) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// unframe returns a line's message, without the channel key, and whether
// the line began with the key.
func unframe(line []byte, key []byte) ([]byte, bool) {
	if len(line) < len(key) || subtle.ConstantTimeCompare(line[:len(key)], key) != 1 {
		return nil, false
	}
	return line[len(key):], true
}

// errTooLong is a line over the message limit (it was skipped).
var errTooLong = errors.New("line over the message limit")

// lineReader reads protocol lines, each into a fresh slice (decoded
// messages alias it), and skips lines over max bytes.
type lineReader struct {
	r   *bufio.Reader
	max int64
}

func newLineReader(r io.Reader, max int64) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline. A line over the limit
// is read to its end and dropped: next returns errTooLong and its size. At
// the end of the input, it returns what follows the last newline with the
// error.
func (l *lineReader) next() ([]byte, int64, error) {
	var (
		parts [][]byte
		size  int64
	)
	for {
		frag, err := l.r.ReadSlice('\n')
		if err == nil {
			frag = frag[:len(frag)-1]
		}
		if size += int64(len(frag)); size > l.max {
			parts = nil
		} else {
			parts = append(parts, bytes.Clone(frag))
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case size > l.max:
			return nil, size, cmp.Or(err, errTooLong)
		case len(parts) == 1:
			return parts[0], size, err
		}
		return slices.Concat(parts...), size, err
	}
}

// initParams configures the runner; it is the first line the host sends.
type initParams struct {
	// ChannelKey starts every line the runner writes (see channelKey).
	ChannelKey    string            `json:"channel_key"`
	IndexURL      string            `json:"indexURL"`
	Snapshot      string            `json:"snapshot,omitempty"`
	MakeSnapshot  bool              `json:"make_snapshot,omitempty"`
	Roots         []initRoot        `json:"roots,omitempty"`
	InterruptPipe string            `json:"interrupt_pipe,omitempty"`
	Limits        initLimits        `json:"limits"`
	Env           map[string]string `json:"env,omitempty"`
	Globals       map[string]any    `json:"globals,omitempty"`
	Namespaces    json.RawMessage   `json:"namespaces,omitempty"`
	Paths         initPaths         `json:"paths"`
	Packages      *initPackages     `json:"packages,omitempty"`
	NPM           *initNPM          `json:"npm,omitempty"`
}

// initNPM is the host's npm directory (a node_modules holder) that
// require() reads, read-only.
type initNPM struct {
	Dir string `json:"dir"`
}

// initPackages are the host's packages: directories under PackagesPath
// that go on sys.path.
type initPackages struct {
	Paths    []string  `json:"paths"`
	Libs     []string  `json:"libs,omitempty"` // on LD_LIBRARY_PATH
	Runtime  bool      `json:"runtime,omitempty"`
	Micropip *Micropip `json:"micropip,omitempty"`
	Preload  []string  `json:"preload,omitempty"` // imported before the snapshot
}

// initRoot is a host directory the sandbox sees at Target.
type initRoot struct {
	Target   string `json:"target"` // /workspace, /files, /mnt/...
	Dir      string `json:"dir"`    // symlinks resolved
	ReadOnly bool   `json:"readOnly"`
}

type initLimits struct {
	MaxMessageBytes     int64 `json:"max_message_bytes"`
	MaxResultBytes      int64 `json:"max_result_bytes"`
	WorkspaceQuotaBytes int64 `json:"workspace_quota_bytes"` // 0: none
	GraceMS             int64 `json:"grace_ms"`
	IdleLimitMS         int64 `json:"idle_limit_ms"`
}

// initPaths are the runtime's files, which the runner stops reading (and
// hides) once booted.
type initPaths struct {
	PyodideFiles []string `json:"pyodide_files"`
	CacheDir     string   `json:"cache_dir,omitempty"`
}

// ReadyInfo is what the sandbox reports when it has booted.
type ReadyInfo struct {
	Pyodide string `json:"pyodide"`
	Python  string `json:"python"`
	// Snapshot reports that the interpreter was restored from the memory
	// snapshot rather than booted cold.
	Snapshot bool `json:"snapshot"`
	// BootMS is the time from the runner's start to ready, as it measured it.
	BootMS int `json:"boot_ms"`
}

type execParams struct {
	Code    string  `json:"code"`
	Timeout float64 `json:"timeout,omitempty"` // seconds; 0: none
	// Stream asks for what the code prints as it is printed ("output"
	// notifications), besides the result's stdout and stderr.
	Stream bool `json:"stream,omitempty"`
}
