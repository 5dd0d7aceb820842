package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// Pages that trap a tab, written as the web writes them (issue 29, items 6
// and 7). Each is served with no-store so every visit runs it afresh.
const (
	stuckHugeDOM     = "/huge-dom.html"     // 200,000 buttons built in one task
	stuckPrintLoop   = "/print-loop.html"   // print() without end
	stuckFullscreen  = "/fullscreen.html"   // requestFullscreen + history.back() without end
	stuckRedirect    = "/redirect.html"     // a script redirect to itself, without end
	stuckAlertLoop   = "/alert-loop.html"   // alert() without end
	stuckConfirmLoop = "/confirm-loop.html" // confirm() without end
	stuckSelfNav     = "/self-nav.html"     // the page navigates itself every 10 ms
	stuckShadowCrash = "/shadow-crash.html" // 10,000 nested shadow roots
	stuckBusy        = "/busy.html"         // the main thread loops forever after load
	stuckSane        = "/sane.html"         // an ordinary page
)

// saneText is what the ordinary page says.
const saneText = "A sane page."

func stuckDoc(title, body string) string {
	return "<!doctype html><html><head><meta charset=utf-8><title>" + title + "</title></head><body><h1>" + title + "</h1>" + body + "</body></html>"
}

// stuckPages serves the trapping pages on loopback for the test.
func stuckPages(t *testing.T) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		stuckHugeDOM: stuckDoc("Huge DOM", `<script>
			const f = document.createDocumentFragment();
			for (let i = 0; i < 200000; i++) { const b = document.createElement('button'); b.textContent = 'Button ' + i; f.appendChild(b); }
			document.body.appendChild(f);
		</script>`),
		stuckPrintLoop: stuckDoc("Print loop", `<p>Prints forever.</p><script>addEventListener('load', () => { for (;;) print(); });</script>`),
		stuckFullscreen: stuckDoc("Fullscreen loop", `<p>Fullscreen and back, forever.</p><script>
			// A back-button trap: every step back pushes the page again,
			// and asks for fullscreen.
			const trap = () => { document.documentElement.requestFullscreen().catch(() => {}); history.pushState({trap: 1}, '', '#trap'); history.back(); };
			addEventListener('popstate', trap);
			addEventListener('load', trap);
		</script>`),
		stuckAlertLoop:   stuckDoc("Alert loop", `<p>Alerts forever.</p><script>addEventListener('load', () => { for (let i = 0; ; i++) alert('alert ' + i); });</script>`),
		stuckConfirmLoop: stuckDoc("Confirm loop", `<p>Asks forever.</p><script>while (!confirm('Leave?')) {}</script>`),
		stuckSelfNav:     stuckDoc("Self navigating", `<p>Moves every 10 ms.</p><script>setTimeout(() => { location.href = location.pathname + '?' + Math.random(); }, 10);</script>`),
		stuckShadowCrash: stuckDoc("Shadow crash", `<p>Deep shadow roots.</p><script>
			let host = document.body;
			for (let i = 0; i < 10000; i++) { const d = document.createElement('div'); host.appendChild(d); host = d.attachShadow({mode: 'open'}); }
			host.textContent = 'deepest';
		</script>`),
		stuckBusy: stuckDoc("Busy", `<p>Busy after load.</p><script>addEventListener('load', () => setTimeout(() => { for (;;) {} }, 0));</script>`),
		stuckSane: stuckDoc("Sane", `<p>`+saneText+`</p><button>Press</button>`),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == stuckRedirect {
			// Each visit sends the browser to the next one, at once.
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			writeHTML(w, stuckDoc("Redirect "+strconv.Itoa(n), fmt.Sprintf(`<script>location.replace(%q)</script>`, stuckRedirect+"?n="+strconv.Itoa(n+1))))
			return
		}
		doc, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		writeHTML(w, doc)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func writeHTML(w http.ResponseWriter, doc string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, doc)
}
