package ui

import (
	"encoding/json"
	"regexp"
	"strings"
)

// AssetsMarker is where the styling assets go in a view: the renderer,
// Standalone and the serve package replace it.
const AssetsMarker = "<!--parselbox:assets-->"

var (
	reHTML    = regexp.MustCompile(`(?i)<html[\s>]`)
	reDoctype = regexp.MustCompile(`(?i)^\s*<!doctype`)
	reHeadEnd = regexp.MustCompile(`(?i)</head\s*>`)
	reBody    = regexp.MustCompile(`(?i)<body[\s>]`)
	reHTMLTag = regexp.MustCompile(`(?i)<html(\s[^>]*)?>`)
)

// Render turns the HTML passed to display() into a full HTML document: a
// fragment is wrapped in a page (UTF-8, a viewport, light and dark colour
// schemes), a document without a doctype gets one, and the runtime block
// goes just before </head>: the assets marker and window.pbx, whose
// call(path, body, {method, headers}) reaches the @api routes of the app
// served at base (empty: none, or the page's own origin when key is
// "same-origin"); key is the token that lets a view from another origin
// call them.
func Render(html, base, key string) string {
	if !reHTML.MatchString(html) {
		html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" +
			"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">" +
			"<meta name=\"color-scheme\" content=\"light dark\"></head><body>" + html + "</body></html>"
	} else if !reDoctype.MatchString(html) {
		html = "<!DOCTYPE html>\n" + html
	}
	block := AssetsMarker + runtimeScript(base, key)
	if loc := reHeadEnd.FindStringIndex(html); loc != nil {
		return html[:loc[0]] + block + html[loc[0]:]
	}
	if loc := reBody.FindStringIndex(html); loc != nil {
		return html[:loc[0]] + "<head>" + block + "</head>" + html[loc[0]:]
	}
	if loc := reHTMLTag.FindStringIndex(html); loc != nil {
		return html[:loc[1]] + "<head>" + block + "</head>" + html[loc[1]:]
	}
	return block + html
}

// SameOrigin as Render's base makes window.pbx call the page's own origin
// (a page the serve package serves).
const SameOrigin = "same-origin"

// runtimeScript is window.pbx. Its strings are JSON, safe in a <script>
// (json.Marshal escapes <, > and &).
func runtimeScript(base, key string) string {
	b, _ := json.Marshal(base)
	k, _ := json.Marshal(key)
	return "<script>" + strings.NewReplacer("__BASE__", string(b), "__KEY__", string(k)).Replace(pbxJS) + "</script>"
}

const pbxJS = `(function(){var base=__BASE__;if(base==="same-origin")base=location.origin;` +
	`window.pbx={base:base,key:__KEY__,async call(path,body,opts){opts=opts||{};` +
	`if(!this.base)throw new Error("pbx.call: no app is served (start parselbox with --serve)");` +
	`if(path[0]!=="/")path="/api/"+path;` +
	`var h=Object.assign({"Content-Type":"application/json"},opts.headers||{});` +
	`if(this.key)h["X-Parselbox-Token"]=this.key;` +
	`var init={method:opts.method||"POST",headers:h};if(body!==undefined)init.body=JSON.stringify(body);` +
	`var r=await fetch(this.base+path,init);var t=await r.text();var d;try{d=JSON.parse(t)}catch(e){d=t}` +
	`if(!r.ok)throw new Error((d&&d.error)||("HTTP "+r.status));return d}}})();`
