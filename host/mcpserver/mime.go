package mcpserver

import (
	"mime"
	"path"
	"strings"
)

// mimeTypes are the types of the files agents make most, so that the answer
// does not depend on the host's MIME database.
var mimeTypes = map[string]string{
	".txt":     "text/plain",
	".log":     "text/plain",
	".md":      "text/markdown",
	".csv":     "text/csv",
	".tsv":     "text/tab-separated-values",
	".html":    "text/html",
	".htm":     "text/html",
	".css":     "text/css",
	".js":      "text/javascript",
	".mjs":     "text/javascript",
	".ts":      "text/typescript",
	".py":      "text/x-python",
	".json":    "application/json",
	".jsonl":   "application/jsonl",
	".ipynb":   "application/x-ipynb+json",
	".xml":     "application/xml",
	".yaml":    "application/yaml",
	".yml":     "application/yaml",
	".toml":    "application/toml",
	".sql":     "application/sql",
	".svg":     "image/svg+xml",
	".png":     "image/png",
	".jpg":     "image/jpeg",
	".jpeg":    "image/jpeg",
	".gif":     "image/gif",
	".webp":    "image/webp",
	".pdf":     "application/pdf",
	".zip":     "application/zip",
	".gz":      "application/gzip",
	".tar":     "application/x-tar",
	".wasm":    "application/wasm",
	".parquet": "application/vnd.apache.parquet",
	".xlsx":    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}

// mimeType guesses a file's type from its extension.
func mimeType(p string) string {
	ext := strings.ToLower(path.Ext(p))
	if t, ok := mimeTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		if base, _, err := mime.ParseMediaType(t); err == nil {
			return base
		}
	}
	return "application/octet-stream"
}

// isText reports whether a MIME type is text, which resources return as
// text rather than as a base64 blob.
func isText(t string) bool {
	switch t {
	case "application/json", "application/jsonl", "application/xml", "application/yaml",
		"application/toml", "application/sql", "application/javascript":
		return true
	}
	return strings.HasPrefix(t, "text/") || strings.HasSuffix(t, "+json") || strings.HasSuffix(t, "+xml")
}
