package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// ContentSecurityPolicy is sent with every console file: scripts, styles,
// images and requests from this origin only, no inline script or style,
// no plugins, no framing, no form posts anywhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Assets returns the handler of the console's files under Path: the page
// at Path+"/" and its scripts and styles. Paths that are not files answer
// 404. Every answer carries the Content-Security-Policy, X-Frame-Options
// DENY, nosniff, no referrer and a same-origin resource policy, so that no
// other site can frame the console or load its scripts.
func Assets() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		name := strings.TrimPrefix(r.URL.Path, Path+"/")
		if name == "" {
			name = "index.html"
		}
		name = path.Clean(name)
		if strings.HasSuffix(name, "/") || !fs.ValidPath(name) {
			http.NotFound(w, r)
			return
		}
		if fi, err := fs.Stat(sub, name); err != nil || fi.IsDir() {
			http.NotFound(w, r)
			return
		}
		http.ServeFileFS(w, r, sub, name)
	})
}
