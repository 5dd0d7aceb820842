package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Fixture pages under testdata/bench, by the name the table uses.
var fixturePages = []struct{ Name, Path string }{
	{"article", "/article.html"},
	{"table", "/table.html"},
	{"frames", "/frames.html"},
	{"form", "/form.html"},
	{"spa", "/spa.html"},
}

// fixtureServer serves testdata/bench plus the dynamic endpoints the pages
// use: /hang (a frame document that never arrives) and /api/orders (the
// JSON the single-page app fetches after a click).
type fixtureServer struct {
	*httptest.Server

	// release is closed on shutdown to let hanging handlers return, so
	// httptest.Server.Close (which waits for active requests) can finish.
	release chan struct{}
	once    sync.Once

	mu      sync.Mutex
	hanging int // handlers parked in /hang right now
	hangs   int // /hang requests served in total
}

// apiDelay is how long /api/orders takes, like a real backend round trip.
const apiDelay = 150 * time.Millisecond

func startFixtures(dir string) (*fixtureServer, error) {
	if _, err := os.Stat(filepath.Join(dir, "form.html")); err != nil {
		return nil, fmt.Errorf("fixtures: %w (run from the repository root or pass --fixtures)", err)
	}
	f := &fixtureServer{release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	mux.HandleFunc("/frames.html", func(w http.ResponseWriter, r *http.Request) { framesPage(w, r, dir) })
	mux.HandleFunc("/hang", f.hang)
	mux.HandleFunc("/api/orders", f.orders)
	mux.HandleFunc("/detector", detectorHandler(dir))
	f.Server = httptest.NewServer(mux)
	return f, nil
}

// framesPage serves frames.html with its widget from another origin (the
// same server named "localhost"), as a page's ads and embeds come: a frame
// the page's scripts (and our watch) cannot read, out of the page's
// process.
func framesPage(w http.ResponseWriter, r *http.Request, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "frames.html"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, port, _ := strings.Cut(r.Host, ":")
	other := "http://localhost:" + port
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, strings.Replace(string(b), `src="/widget.html"`, `src="`+other+`/widget.html"`, 1))
}

// hang sends headers and then nothing until the client goes away or the
// server shuts down: an ad or embed whose document never finishes.
func (f *fixtureServer) hang(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hanging++
	f.hangs++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.hanging--
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.URL.Query().Get("body") == "partial" {
		_, _ = io.WriteString(w, "<!doctype html><html><head><title>Loading</title></head><body><p>Loading")
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	select {
	case <-r.Context().Done():
	case <-f.release:
	}
}

type order struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Items    int    `json:"items"`
	Total    string `json:"total"`
	Status   string `json:"status"`
}

var customers = []string{"Aino Virtanen", "Bruno Costa", "Chloé Martin", "Dev Patel", "Emeka Obi", "Freya Nilsen", "Goran Kovač", "Hana Sato"}

func (f *fixtureServer) orders(w http.ResponseWriter, r *http.Request) {
	select {
	case <-time.After(apiDelay):
	case <-r.Context().Done():
		return
	case <-f.release:
		return
	}
	status := r.URL.Query().Get("status")
	if status == "" || status == "all" {
		status = "open"
	}
	var out struct {
		Orders []order `json:"orders"`
	}
	for i := range 25 {
		out.Orders = append(out.Orders, order{
			ID:       fmt.Sprintf("ORD-%d", 1001+i),
			Customer: customers[i%len(customers)],
			Items:    1 + (i*7)%5,
			Total:    fmt.Sprintf("€%d.%02d", 12+(i*37)%180, (i*53)%100),
			Status:   status,
		})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(out)
}

// firstOrderID is the text that shows the SPA rendered its list.
const firstOrderID = "ORD-1001"

// Close releases hanging handlers, drops connections and waits for the
// server to stop.
func (f *fixtureServer) Close() {
	f.once.Do(func() {
		close(f.release)
		f.CloseClientConnections()
		f.Server.Close()
	})
}

func (f *fixtureServer) hangStats() (now, total int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hanging, f.hangs
}
