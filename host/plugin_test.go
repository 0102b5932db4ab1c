package host_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/protocol"
	"github.com/parselbox/parselbox/internal/testenv"
	"github.com/parselbox/parselbox/sdk"
)

// The test binary doubles as a bridge plugin: started by the host's plugin
// manager (which sets go-plugin's magic cookie), it serves pluginBridge.
func TestMain(m *testing.M) {
	if os.Getenv(sdk.Handshake.MagicCookieKey) != "" {
		sdk.Serve(throwing{pluginBridge()})
		return
	}
	os.Setenv("PARSELBOX_TEST_PLUGIN_SECRET", "s3cret")
	os.Setenv("PARSELBOX_TEST_ALLOWED", "fine")
	os.Setenv("PARSELBOX_TEST_PASSED_KEY", envKey)
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

type pluginConfig struct {
	// Marker is a file the bridge writes when a call sees its cancellation.
	Marker string `json:"marker"`
	Label  string `json:"label"`
	// Token is reported to the host as a secret (sdk.DecodeConfig).
	Token sdk.Secret `json:"token"`
	// Power is a key with a default.
	Power int `json:"power" default:"100"`
}

// The credentials of the redaction tests: one in the bridge's config, one
// in a variable passed to it.
const (
	configToken = "cfg-tok-7Hq2xZ9wLm4Rt8Vb"
	envKey      = "env-key-Pd3Ks8Qa1Yv6Nc0J"
)

func pluginBridge() *sdk.Bridge {
	var cfg pluginConfig
	b := sdk.NewBridge(&sdk.Info{Name: "testplugin", Version: "v0", Description: "A bridge in a test binary."}, &sdk.Options{
		Configure: func(_ context.Context, req *sdk.ConfigureRequest) (err error) {
			cfg, err = sdk.DecodeConfig[pluginConfig](req)
			return err
		},
	})
	type textIn struct {
		Text  string `json:"text"`
		Times int    `json:"times,omitempty"`
	}
	sdk.AddTool(b, &sdk.Tool{Name: "echo", Description: "Repeats text."}, func(_ context.Context, _ *sdk.CallToolRequest, in textIn) (string, error) {
		return strings.Repeat(in.Text, max(in.Times, 1)), nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "files.label", Description: "The configured label."}, func(context.Context, *sdk.CallToolRequest, struct{}) (string, error) {
		return cfg.Label, nil
	})
	type envIn struct {
		Name string `json:"name"`
	}
	sdk.AddTool(b, &sdk.Tool{Name: "getenv"}, func(_ context.Context, _ *sdk.CallToolRequest, in envIn) (string, error) {
		return os.Getenv(in.Name), nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "crash", Description: "Dies mid-call."}, func(context.Context, *sdk.CallToolRequest, struct{}) (string, error) {
		os.Exit(3)
		return "", nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "pid"}, func(context.Context, *sdk.CallToolRequest, struct{}) (int, error) {
		return os.Getpid(), nil
	})
	type hasEnvIn struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	sdk.AddTool(b, &sdk.Tool{Name: "hasenv"}, func(_ context.Context, _ *sdk.CallToolRequest, in hasEnvIn) (bool, error) {
		return os.Getenv(in.Name) == in.Value, nil
	})
	type scanIn struct {
		Sector  string `json:"sector" default:"alpha"`
		Depth   int    `json:"depth" default:"3"`
		Encrypt bool   `json:"encrypt" default:"true"`
	}
	sdk.AddTool(b, &sdk.Tool{Name: "scan", Description: "Defaults."}, func(_ context.Context, _ *sdk.CallToolRequest, in scanIn) (scanIn, error) {
		return in, nil
	})
	// The namespace itself is callable: tp(...).
	sdk.AddTool(b, &sdk.Tool{Name: "", Description: "Power, times a factor."}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Factor int `json:"factor" default:"2"`
	}) (int, error) {
		return cfg.Power * in.Factor, nil
	})
	// leak sends its credentials to the sandbox in every way a careless (or
	// hostile) bridge could: the router must let none through.
	sdk.AddTool(b, &sdk.Tool{Name: "leak"}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (map[string]any, error) {
		out := map[string]any{}
		for name, secret := range map[string]string{"config": cfg.Token.Value(), "env": os.Getenv("PARSELBOX_TEST_PASSED_KEY")} {
			req.Log("log line: " + secret)
			req.Progress(1, 2, "progress: "+secret)
			out[name] = leakForms(secret)
		}
		return out, nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "leakerr"}, func(context.Context, *sdk.CallToolRequest, struct{}) (any, error) {
		return nil, sdk.Errorf(sdk.CodePermission, "denied for %s (%s)", cfg.Token.Value(), base64.URLEncoding.EncodeToString([]byte(cfg.Token.Value())))
	})
	sdk.AddTool(b, &sdk.Tool{Name: "wait", Description: "Logs, then waits to be cancelled."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (string, error) {
		req.Log("waiting")
		<-ctx.Done()
		os.WriteFile(cfg.Marker, []byte("cancelled"), 0o644)
		return "", sdk.Errorf(sdk.CodeCancelled, "wait: cancelled")
	})
	// report fails with a ToolError of any code, as a failed result; throw
	// (see throwing) returns the same failure as CallTool's error. (Not
	// "fail": TestToolPolicies searches for refused tools by that name.)
	type failIn struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	for _, name := range []string{"report", "throw"} {
		sdk.AddTool(b, &sdk.Tool{Name: name}, func(_ context.Context, _ *sdk.CallToolRequest, in failIn) (any, error) {
			return nil, sdk.Errorf(sdk.ErrorCode(in.Code), "%s", in.Message)
		})
	}
	return b
}

// throwing serves a bridge, but returns the failure of a call of its tool
// "throw" as CallTool's error instead of a failed result (as a bridge not
// built on sdk.Bridge may do): a ToolError, or for the codes "decline" and
// "config" the error of that kind with the failure's message.
type throwing struct{ *sdk.Bridge }

func (b throwing) CallTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	res, err := b.Bridge.CallTool(ctx, req)
	if req.Name != "throw" || err != nil || !res.IsError {
		return res, err
	}
	switch res.Error.Code {
	case "decline":
		return nil, sdk.Decline(res.Error.Message)
	case "config":
		return nil, &sdk.ConfigError{Key: "throw", Message: res.Error.Message}
	}
	return nil, res.Error
}

// leakForms returns a secret in the encodings a server or a tool may put it
// in: as it is, URL-encoded, base64 and base64url (alone, and inside longer
// payloads at each of the three alignments), hex, and inside bytes that are
// not UTF-8.
func leakForms(secret string) map[string]any {
	forms := map[string]any{
		"raw":     "prefix " + secret + " suffix",
		"query":   url.QueryEscape("a=b&k=" + secret + "&x=1"),
		"path":    url.PathEscape("/v1/" + secret + "/x"),
		"hex":     hex.EncodeToString([]byte(secret)),
		"HEX":     strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"base64":  base64.StdEncoding.EncodeToString([]byte(secret)),
		"b64url":  base64.RawURLEncoding.EncodeToString([]byte(secret)),
		"binary":  map[string]string{sdk.BytesKey: base64.StdEncoding.EncodeToString([]byte("\xff\xfeAuthorization: Bearer " + secret + "\r\n\x00"))},
		"in_json": fmt.Sprintf(`{"key": %q}`, secret),
	}
	for k := range 3 {
		payload := []byte(strings.Repeat("Z", k) + "Authorization: Bearer " + secret + "\n")
		forms[fmt.Sprintf("embedded_std_%d", k)] = base64.StdEncoding.EncodeToString(payload)
		forms[fmt.Sprintf("embedded_url_%d", k)] = base64.URLEncoding.EncodeToString(payload)
	}
	return forms
}

func newPluginSandbox(t *testing.T, hooks ...host.Hook) (*host.Sandbox, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "cancelled")
	sb := newSandbox(t, host.Config{
		Bridges: map[string]host.BridgeConfig{
			"tp": {Plugin: exe, Env: []string{"PARSELBOX_TEST_ALLOWED", "PARSELBOX_TEST_PASSED_KEY"},
				Config: map[string]any{"marker": marker, "label": "from config", "token": configToken}},
		},
		Hooks: hooks,
	})
	return sb, marker
}

func TestPluginBridge(t *testing.T) {
	t.Parallel()
	sb, marker := newPluginSandbox(t)
	for _, tc := range []struct {
		code string
		want any
	}{
		{"tp.echo(text='hi')", "hi"},
		{"tp.echo('ab', 3)", "ababab"},
		{"tp.files.label()", "from config"},
		// A variable passed to the bridge reaches it. (Its value is too short
		// to be taken as a secret; PARSELBOX_TEST_PASSED_KEY's is one.)
		{"tp.getenv('PARSELBOX_TEST_ALLOWED')", "fine"},
		{"tp.hasenv('PARSELBOX_TEST_PASSED_KEY', '" + envKey + "')", true},
		{"tp.getenv('PARSELBOX_TEST_PASSED_KEY')", sdk.Redacted},
		{"tp.getenv('PARSELBOX_TEST_PLUGIN_SECRET')", ""},
		{"tp.getenv('HOME')", ""},
		// Defaults apply in the plugin; the namespace itself is callable.
		{"tp.scan()", map[string]any{"sector": "alpha", "depth": 3.0, "encrypt": true}},
		{"tp.scan(depth=5, sector='beta')", map[string]any{"sector": "beta", "depth": 5.0, "encrypt": true}},
		{"tp()", 200.0},
		{"tp(3)", 300.0},
		{"help(tp.scan).splitlines()[0]", "tp.scan(sector: str = 'alpha', depth: int = 3, encrypt: bool = True) -> dict"},
		{"sbx.inspect('tp.scan')['tp.scan']['parameters']['properties']['sector']['default']", "alpha"},
	} {
		if diff := cmp.Diff(tc.want, value(t, exec(t, sb, tc.code))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.code, diff)
		}
	}
	e := raised(t, exec(t, sb, "tp.echo(text=5)"), "ValueError")
	if !strings.Contains(e.Message, "text") {
		t.Errorf("bad argument message: %s", e.Message)
	}
	raised(t, exec(t, sb, "tp.nope()"), "AttributeError")

	// Cancellation reaches the plugin: once the tool is running (its log
	// says so), the task is cancelled.
	r := exec(t, sb, `t = tp.wait.task()
for _ in range(3000):
    if t.tail(1) == "waiting":
        break
    await asyncio.sleep(0.01)
log = t.tail(1)
t.cancel()
s = await t.wait(60)
[log, s.state]`)
	if diff := cmp.Diff([]any{"waiting", "cancelled"}, value(t, r)); diff != "" {
		t.Errorf("task (-want +got):\n%s", diff)
	}
	waitUntil(t, "the plugin to see the cancellation", func() bool {
		b, _ := os.ReadFile(marker)
		return string(b) == "cancelled"
	})

	// A crash mid-call fails that call, naming the bridge; the next call
	// restarts the plugin.
	pid := value(t, exec(t, sb, "tp.pid()"))
	e = raised(t, exec(t, sb, "tp.crash()"), "ConnectionError")
	if !strings.Contains(e.Message, `bridge "tp"`) {
		t.Errorf("crash message does not name the bridge: %s", e.Message)
	}
	if got := value(t, exec(t, sb, "tp.echo('back')")); got != "back" {
		t.Errorf("after the crash: %v", got)
	}
	if got := value(t, exec(t, sb, "tp.pid()")); got == pid {
		t.Errorf("plugin not restarted (pid %v)", got)
	}
	// Discovery covers plugins like any namespace.
	found := value(t, exec(t, sb, "sbx.search('repeats')")).(map[string]any)
	if hits := found["tp (testplugin)"].([]any); len(hits) != 1 || hits[0].(map[string]any)["path"] != "tp.echo" {
		t.Errorf("search: %v", found)
	}
}

// TestPluginErrorsReachPython walks the table of error codes: a plugin's
// failure of each code reaches Python as the code's exception with the
// bridge's message, as a failed result and as the call's error, from a
// plain call (the Calls stream) and from a task (a Call stream). A
// decline or a configuration error from a call (errors of Configure) is a
// broken bridge to Python: ConnectionError, naming the bridge.
func TestPluginErrorsReachPython(t *testing.T) {
	t.Parallel()
	sb, _ := newPluginSandbox(t)
	type want struct {
		Code, Python, Message string
	}
	var wants []want
	for _, ci := range protocol.Codes {
		wants = append(wants, want{string(ci.Code), ci.Python, "the bridge says " + string(ci.Code)})
	}
	wants = append(wants,
		want{"decline", "ConnectionError", `bridge "tp": the bridge declined to serve: not here`},
		want{"config", "ConnectionError", `bridge "tp": throw: bad key`},
	)
	cases, err := json.Marshal(wants)
	if err != nil {
		t.Fatal(err)
	}
	r := exec(t, sb, `import asyncio, builtins, json
got = []
for w in json.loads(`+strconv.Quote(string(cases))+`):
    msg = w["Message"].removeprefix('bridge "tp": ').removeprefix("the bridge declined to serve: ").removeprefix("throw: ")
    cls = asyncio.CancelledError if w["Python"] == "CancelledError" else getattr(builtins, w["Python"])
    for tool in ("report", "throw"):
        if tool == "report" and w["Code"] in ("decline", "config"):
            continue
        for how in ("call", "task"):
            f = getattr(tp, tool)
            try:
                if how == "call":
                    f(w["Code"], msg)
                else:
                    await f.task(w["Code"], msg)
                got.append([w["Code"], tool, how, "no exception"])
            except BaseException as e:
                got.append([w["Code"], tool, how, type(e) is cls, type(e).__name__, str(e)])
got`)
	var n int
	for _, row := range value(t, r).([]any) {
		row := row.([]any)
		code, tool, how := row[0].(string), row[1], row[2]
		i := slices.IndexFunc(wants, func(w want) bool { return w.Code == code })
		w := wants[i]
		if diff := cmp.Diff([]any{code, tool, how, true, w.Python, w.Message}, row); diff != "" {
			t.Errorf("%s from %s by %s (-want +got):\n%s", code, tool, how, diff)
		}
		n++
	}
	if want := 4*len(protocol.Codes) + 2*2; n != want {
		t.Errorf("%d cases ran, want %d", n, want)
	}
}

func TestPluginHookRefusal(t *testing.T) {
	t.Parallel()
	h := &recorder{refuse: "tp.echo"}
	sb, _ := newPluginSandbox(t, h)
	e := raised(t, exec(t, sb, "tp.echo('x')"), "PermissionError")
	if e.Message != "calls to tp.echo need approval" {
		t.Errorf("refusal: %q", e.Message)
	}
	if got := value(t, exec(t, sb, "tp.files.label()")); got != "from config" {
		t.Errorf("other tools still work: %v", got)
	}
}

func TestPluginConfigErrors(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	for name, b := range map[string]host.BridgeConfig{
		"missing plugin": {Plugin: "no-such-plugin"},
		"bad sha256":     {Plugin: exe, SHA256: strings.Repeat("0", 64)},
	} {
		sb, err := host.New(t.Context(), host.Config{
			RuntimeDir: testenv.Runtime(t).Dir, Bridges: map[string]host.BridgeConfig{"b": b},
		})
		var ce *host.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: want a ConfigError, got %v", name, err)
		}
		if sb != nil {
			sb.Close()
		}
	}
}

// TestPluginSecretsNeverReachPython: a bridge that sends its credentials
// back in every form (it does no redaction of its own) gets none of them
// to Python: the router removes the secrets the bridge reported from
// Configure (an sdk.Secret in its config) and the values of the variables
// passed to it, from results (bytes included), errors, log lines, progress
// and the task's log file.
func TestPluginSecretsNeverReachPython(t *testing.T) {
	t.Parallel()
	sb, _ := newPluginSandbox(t)
	r := exec(t, sb, `t = tp.leak.task()
res = await t
out = [res, t.tail(50)]
try:
    tp.leakerr()
except PermissionError as e:
    out.append(str(e))
import base64
out.append([base64.b64encode(res[k]["binary"]).decode() for k in ("config", "env")])
out`)
	if r.Error != nil {
		t.Fatalf("%s: %s", r.Error.Type, r.Error.Message)
	}
	shown := string(r.Output)
	got := value(t, r).([]any)
	for _, b64 := range got[3].([]any) {
		b, err := base64.StdEncoding.DecodeString(b64.(string))
		if err != nil {
			t.Fatal(err)
		}
		shown += "\n" + string(b) // the bytes as Python has them
	}
	if tail := got[1].(string); !strings.Contains(tail, "log line: "+sdk.Redacted) || !strings.Contains(tail, "progress: "+sdk.Redacted) {
		t.Errorf("the task's log does not show the redacted lines:\n%s", tail)
	}
	for _, secret := range []string{configToken, envKey} {
		for _, form := range secretForms(secret) {
			if strings.Contains(shown, form) {
				t.Errorf("Python sees %q, a form of %q:\n%s", form, secret, shown)
			}
		}
	}
	if n := strings.Count(shown, sdk.Redacted); n < 2*15 {
		t.Errorf("only %d redactions: the forms did not all reach the router\n%s", n, shown)
	}
	// The task's log file, which Python reads, holds none either.
	raw := value(t, exec(t, sb, "open(t.logfile).read()")).(string)
	for _, secret := range []string{configToken, envKey} {
		if strings.Contains(raw, secret) {
			t.Errorf("the task log file holds %q:\n%s", secret, raw)
		}
	}
}

// secretForms are the strings by which a secret is recognized in what
// Python sees: the secret, its URL, hex, base64 and base64url encodings, and
// the part of a longer base64 payload that encodes only the secret's bytes,
// at each alignment.
func secretForms(secret string) []string {
	b := []byte(secret)
	forms := []string{secret, url.QueryEscape(secret), url.PathEscape(secret), hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b))}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for d := range 3 {
			n := (len(b) - d) / 3 * 3
			forms = append(forms, enc.EncodeToString(b[d:d+n]))
		}
	}
	return forms
}
