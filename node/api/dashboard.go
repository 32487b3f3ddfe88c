package api

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed dashboard
var dashboardFiles embed.FS

// dashboard serves the embedded page: plain HTML, JS and SVG, nothing
// fetched from elsewhere.
func dashboard() http.Handler {
	sub, _ := fs.Sub(dashboardFiles, "dashboard")
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}
