package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/parselbox/parselbox/sdk"
)

// config is the bridge's `config = {...}` block.
type config struct {
	// BaseURL is where requests go; empty: the spec's first server URL.
	BaseURL string `json:"base_url"`
	// Spec is the path or http(s) URL of an OpenAPI 3.0/3.1 document.
	Spec string `json:"spec"`
	// Headers are sent with every request.
	Headers map[string]string `json:"headers"`
	// Token is sent as "Authorization: Bearer <token>"; token_env names an
	// environment variable that holds it (the variable must be listed in
	// the bridge's `env`).
	sdk.TokenConfig
	// Timeout bounds one request, response body included. 0: no limit.
	Timeout sdk.Duration `json:"timeout" default:"60s"`
}

// parseConfig decodes and checks the configuration block, and reports its
// credentials to the host (req.AddSecrets). Its errors are *sdk.ConfigError
// naming the key, and never quote a configured value: it may be a
// credential.
func parseConfig(req *sdk.ConfigureRequest) (*config, error) {
	cfg, err := sdk.DecodeConfig[config](req)
	if err != nil {
		return nil, err
	}
	for name := range cfg.Headers {
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, &sdk.ConfigError{Key: "headers", Message: fmt.Sprintf("%q is not a valid header name", name)}
		}
	}
	if cfg.BaseURL != "" {
		if _, err := parseBaseURL(cfg.BaseURL); err != nil {
			return nil, &sdk.ConfigError{Key: "base_url", Message: err.Error()}
		}
	}
	if cfg.BaseURL == "" && cfg.Spec == "" {
		return nil, &sdk.ConfigError{Message: "base_url is required (or give a spec whose servers list has a URL)"}
	}
	return &cfg, nil
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
