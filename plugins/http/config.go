package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// config is the bridge's `config = {...}` block.
type config struct {
	// BaseURL is where requests go; empty: the spec's first server URL.
	BaseURL string `json:"base_url"`
	// Spec is the path or http(s) URL of an OpenAPI 3.0/3.1 document.
	Spec string `json:"spec"`
	// Headers are sent with every request.
	Headers map[string]string `json:"headers"`
	// Token is sent as "Authorization: Bearer <token>".
	Token string `json:"token"`
	// TokenEnv names an environment variable that holds the token (the
	// variable must be listed in the bridge's `env`).
	TokenEnv string `json:"token_env"`
	// Timeout bounds one request, response body included. 0: no limit.
	Timeout duration `json:"timeout"`
}

const defaultTimeout = 60 * time.Second

var configKeys = "base_url, spec, headers, token, token_env, timeout"

// parseConfig decodes and checks the configuration block. Its errors never
// quote a configured value: they may be credentials.
func parseConfig(raw json.RawMessage) (*config, error) {
	cfg := &config{Timeout: duration{defaultTimeout}}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return nil, configError(err)
	}
	if cfg.Token != "" && cfg.TokenEnv != "" {
		return nil, errors.New("set token or token_env, not both")
	}
	if cfg.TokenEnv != "" {
		cfg.Token = os.Getenv(cfg.TokenEnv)
		if cfg.Token == "" {
			return nil, fmt.Errorf("token_env: the environment variable %s is empty or not passed to the bridge (list it in the bridge's env = [...])", cfg.TokenEnv)
		}
	}
	for name := range cfg.Headers {
		if !validHeaderName(name) {
			return nil, fmt.Errorf("headers: %q is not a valid header name", name)
		}
	}
	if cfg.BaseURL != "" {
		if _, err := parseBaseURL(cfg.BaseURL); err != nil {
			return nil, fmt.Errorf("base_url: %w", err)
		}
	}
	if cfg.BaseURL == "" && cfg.Spec == "" {
		return nil, errors.New("base_url is required (or give a spec whose servers list has a URL)")
	}
	return cfg, nil
}

// configError rewrites an encoding/json error about the config block.
func configError(err error) error {
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		key, _, _ := strings.Cut(typeErr.Field, ".")
		want := map[string]string{
			"headers": "an object of strings",
			"timeout": `seconds as a number, or a duration such as "30s"`,
		}[key]
		if want == "" {
			want = "a string"
		}
		return fmt.Errorf("%s: got %s, want %s", typeErr.Field, typeErr.Value, want)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return fmt.Errorf("unknown key %s (the keys are %s)", name, configKeys)
	}
	var te *timeoutError
	if errors.As(err, &te) {
		return te
	}
	return fmt.Errorf("not a JSON object: %v", err)
}

// parseBaseURL checks an absolute http(s) URL without query or fragment.
func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		// url.Parse quotes the URL, which may hold a password.
		return nil, errors.New("not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, errors.New("want an absolute http:// or https:// URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, errors.New("a query or fragment is not supported: give query parameters with each call")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u, nil
}

func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

// duration is a timeout in the config: seconds as a number, or a Go
// duration string.
type duration struct{ time.Duration }

type timeoutError struct{ msg string }

func (e *timeoutError) Error() string { return e.msg }

func (d *duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case float64:
		if v < 0 {
			return &timeoutError{"timeout: must not be negative"}
		}
		d.Duration = time.Duration(v * float64(time.Second))
		return nil
	case string:
		p, err := time.ParseDuration(v)
		if err != nil || p < 0 {
			return &timeoutError{fmt.Sprintf(`timeout: %q is not a duration such as "30s" or a number of seconds`, v)}
		}
		d.Duration = p
		return nil
	case nil:
		return nil
	}
	return &timeoutError{`timeout: want seconds as a number, or a duration such as "30s"`}
}
