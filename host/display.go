package host

import "github.com/parselbox/parselbox/host/ui"

// renderView turns the HTML passed to display() into the result's view: a
// full HTML document whose window.pbx reaches the served app, if any.
func (s *Sandbox) renderView(html string) string {
	if s.serve != nil {
		return ui.Render(html, s.serve.URL(), s.serve.Key())
	}
	return ui.Render(html, "", "")
}
