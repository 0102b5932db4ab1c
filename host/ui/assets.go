package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The files Load reads, relative to the runtime directory (pinned in
// runtime/package.json).
const (
	TailwindPath = "node_modules/@tailwindcss/browser/dist/index.global.js"
	DaisyUIPath  = "node_modules/daisyui/daisyui.css"
	ExtAppsPath  = "node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"
)

// Assets are the styling assets and the MCP Apps client, read from the
// runtime directory.
type Assets struct {
	Tailwind string // the Tailwind v4 browser build (JavaScript)
	DaisyUI  string // daisyUI v5 (CSS)
	ExtApps  string // the ext-apps App client, with its dependencies (an ES module)
	appName  string // the local name App is exported as in ExtApps
}

// Load reads the assets from the runtime directory dir; the error names the
// missing file and what to run.
func Load(dir string) (*Assets, error) {
	var a Assets
	for _, f := range []struct {
		rel string
		dst *string
	}{{TailwindPath, &a.Tailwind}, {DaisyUIPath, &a.DaisyUI}, {ExtAppsPath, &a.ExtApps}} {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.rel)))
		if err != nil {
			return nil, fmt.Errorf("display() assets: %w (run `make runtime` to install the pinned runtime)", err)
		}
		*f.dst = string(b)
	}
	m := reAppExport.FindStringSubmatch(a.ExtApps)
	if m == nil {
		return nil, fmt.Errorf("display() assets: %s does not export App as this version of parselbox expects", ExtAppsPath)
	}
	a.appName = m[1]
	return &a, nil
}

// reAppExport finds the local name of App in the bundle's final export list.
var reAppExport = regexp.MustCompile(`[{,]\s*([\w$]+)\s+as\s+App\s*[,}][^{]*$`)

// Inline is the assets as HTML: a <style> and a <script>, to put where a
// view has AssetsMarker.
func (a *Assets) Inline() string {
	return "<style>" + a.DaisyUI + "</style><script>" + safeScript(a.Tailwind) + "</script>"
}

// Standalone is the view with the assets inlined: a page that renders the
// same in a browser without a network.
func (a *Assets) Standalone(view string) string {
	return strings.Replace(view, AssetsMarker, a.Inline(), 1)
}

// safeScript keeps a script's text from ending its <script> element early.
func safeScript(js string) string {
	return strings.ReplaceAll(js, "</script", `<\/script`)
}
