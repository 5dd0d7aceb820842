package mcptest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Apps are the fixture apps of testdata/apps: one todo app per way the
// common frameworks render (each file's comment says which). Each has a
// textbox "New todo" (Enter adds an item), a checkbox per item named by its
// title, filters All/Active/Completed, a "Clear completed" button shown
// while an item is ticked, and a counter "N items left".
var Apps = []string{"keyed", "vdom", "webcomponents", "hashrouter", "pushstate"}

// AppsServer serves testdata/apps for the test's life and returns its URL
// (http://127.0.0.1:port); app name's page is URL+"/"+name+"/". Any path
// under an app's directory that is not a file answers its index.html, as a
// history-mode router's server does.
func AppsServer(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(AppsHandler(filepath.Join(ModuleRoot(t), "testdata", "apps")))
	t.Cleanup(srv.Close)
	return srv.URL
}

// AppsHandler serves the apps in dir (testdata/apps) with the
// history-mode fallback of AppsServer.
func AppsHandler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(filepath.Clean("/"+r.URL.Path), "/")
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || (st.IsDir() && p == "") {
			app, _, _ := strings.Cut(p, "/")
			if app != "" && !strings.Contains(app, ".") {
				if _, err := os.Stat(filepath.Join(dir, app, "index.html")); err == nil {
					http.ServeFile(w, r, filepath.Join(dir, app, "index.html"))
					return
				}
			}
		}
		files.ServeHTTP(w, r)
	})
}
