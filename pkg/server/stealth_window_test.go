package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// TestStealthWindowKnownAtDocumentStart: a page's first script reads the
// window's outer size at every navigation, also one within the same site
// (where Chromium's RenderDocument made a new frame host that had not yet
// got the window's rectangle: 0×0, an old headless browser's tell, in about
// one navigation of five before --disable-features=RenderDocument).
func TestStealthWindowKnownAtDocumentStart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html><head><script>document.title = 'outer ' + outerWidth + 'x' + outerHeight + ' inner ' + innerWidth + 'x' + innerHeight;</script></head><body><p>%s</p></body></html>`, r.URL.Path)
	}))
	defer srv.Close()
	c, _ := inProcess(t)
	title := regexp.MustCompile(`Page Title: outer (\d+)x(\d+) inner (\d+)x(\d+)`)
	const navigations = 40
	zero := 0
	for i := range navigations {
		out := c.MustCall(t, "browser_navigate", map[string]any{"url": fmt.Sprintf("%s/p%d", srv.URL, i%2)})
		m := title.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("navigation %d: no title with the window's size:\n%s", i, out)
		}
		if m[1] == "0" || m[2] == "0" {
			zero++
			t.Logf("navigation %d: %s", i, m[0])
		}
	}
	if zero > 0 {
		t.Fatalf("the page's first script read an outer size of 0 in %d of %d navigations", zero, navigations)
	}
}
