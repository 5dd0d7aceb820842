package mcptest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Hostile serves pages as hostile as the web, for tests and cmd/mcpbench:
// frames whose server never answers, frames that load forever, a main
// thread busy forever (after and before load), subresources that never
// arrive. Every page holds a heading and a button so a test can snapshot
// and click it; the button sets the heading to "Clicked".
//
// Page paths (append to URL):
//
//	/silent-frames.html     two iframes on a server that accepts the TCP connection and never answers, not even headers
//	/endless-frames.html    two iframes whose documents send headers and part of a body, then never end
//	/busy-after-load.html   a page whose main thread loops forever just after its load event
//	/busy-before-load.html  a page whose inline script loops forever before DOMContentLoaded
//	/busy-on-input.html     a field whose input handler loops forever, and a disabled one
//	/stalled-subresources.html  an image and an async script that never answer (DOMContentLoaded, no load)
//	/plain.html             an ordinary page, to check the session is still usable
type Hostile struct {
	// URL is the base URL of the page server (http://127.0.0.1:port).
	URL string
	// SilentURL is the base URL of the server that accepts connections and
	// never answers.
	SilentURL string

	srv     *httptest.Server
	silent  net.Listener
	release chan struct{}
	once    sync.Once

	mu    sync.Mutex
	conns []net.Conn
	held  int // connections accepted by the silent server so far
}

// Hostile page paths.
const (
	HostileSilentFrames   = "/silent-frames.html"
	HostileEndlessFrames  = "/endless-frames.html"
	HostileBusyAfterLoad  = "/busy-after-load.html"
	HostileBusyBeforeLoad = "/busy-before-load.html"
	HostileBusyOnInput    = "/busy-on-input.html"
	HostileStalledSub     = "/stalled-subresources.html"
	HostilePlain          = "/plain.html"
)

// HostileHeading is the heading every hostile page shows before its button
// is clicked; HostileClicked is the heading after.
const (
	HostileHeading = "Hostile fixture"
	HostileClicked = "Clicked"
)

// StartHostile starts the hostile fixture servers on loopback. Close stops
// them.
func StartHostile() (*Hostile, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("hostile fixture: listen: %w", err)
	}
	h := &Hostile{silent: ln, release: make(chan struct{}), SilentURL: "http://" + ln.Addr().String()}
	go h.hold()
	mux := http.NewServeMux()
	mux.HandleFunc("/", h.page)
	mux.HandleFunc("/endless", h.endless)
	h.srv = httptest.NewServer(mux)
	h.URL = h.srv.URL
	return h, nil
}

// hold accepts connections and keeps them open without reading or writing
// until Close.
func (h *Hostile) hold() {
	for {
		c, err := h.silent.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		h.conns = append(h.conns, c)
		h.held++
		h.mu.Unlock()
	}
}

// SilentConns is how many connections the silent server has accepted.
func (h *Hostile) SilentConns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// Close drops every held connection, releases endless bodies and stops the
// servers.
func (h *Hostile) Close() {
	h.once.Do(func() {
		close(h.release)
		_ = h.silent.Close()
		h.mu.Lock()
		for _, c := range h.conns {
			_ = c.Close()
		}
		h.conns = nil
		h.mu.Unlock()
		h.srv.CloseClientConnections()
		h.srv.Close()
	})
}

// button is the clickable part of every page.
const button = `<button onclick="document.querySelector('h1').textContent='` + HostileClicked + `'">Press me</button>`

func hostileDoc(title, body, head string) string {
	return "<!doctype html><html><head><meta charset=utf-8><title>" + title + "</title>" + head + "</head><body><h1>" + HostileHeading + "</h1>" + button + body + "</body></html>"
}

func (h *Hostile) page(w http.ResponseWriter, r *http.Request) {
	var doc string
	switch r.URL.Path {
	case HostileSilentFrames:
		doc = hostileDoc("Silent frames", fmt.Sprintf(`<p>Two frames that never answer:</p><iframe title="silent one" src="%s/one.html"></iframe><iframe title="silent two" src="%s/two.html"></iframe>`, h.SilentURL, h.SilentURL), "")
	case HostileEndlessFrames:
		doc = hostileDoc("Endless frames", `<p>Two frames that never finish:</p><iframe title="endless one" src="/endless?n=1"></iframe><iframe title="endless two" src="/endless?n=2"></iframe>`, "")
	case HostileBusyAfterLoad:
		doc = hostileDoc("Busy after load", `<p>This page stops answering after it loads.</p><script>addEventListener('load', () => setTimeout(() => { for (;;) {} }, 0));</script>`, "")
	case HostileBusyBeforeLoad:
		doc = hostileDoc("Busy before load", `<p>This page never finishes parsing.</p><script>for (;;) {}</script><p>Never parsed</p>`, "")
	case HostileBusyOnInput:
		doc = hostileDoc("Busy on input", `<label>Locked <input disabled></label><label>Trap <input oninput="for (;;) {}"></label>`, "")
	case HostileStalledSub:
		doc = hostileDoc("Stalled subresources", fmt.Sprintf(`<p>An image and a script that never arrive.</p><img alt="never" src="%s/never.png"><script async src="%s/never.js"></script>`, h.SilentURL, h.SilentURL), "")
	case HostilePlain, "/":
		doc = hostileDoc("Plain", `<p>An ordinary page.</p>`, "")
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, doc)
}

// endless sends headers and the start of a document, then nothing until
// the client goes away or Close.
func (h *Hostile) endless(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "<!doctype html><html><head><title>Loading</title></head><body><p>Loading")
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	select {
	case <-r.Context().Done():
	case <-h.release:
	}
}

// HostilePages starts the hostile fixture for a test and stops it when the
// test ends.
func HostilePages(t testing.TB) *Hostile {
	t.Helper()
	h, err := StartHostile()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}
