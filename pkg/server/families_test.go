package server_test

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// allCaps turns on every opt-in family.
const allCaps = "storage,network,devtools,vision,pdf,testing,downloads,emulation,interactions"

// downloadLimit is the byte budget the family tests run with: data.bin fits
// (twice), big.bin alone does not.
const downloadLimit = 4000

// familyPayload is what /download/data.bin serves: bytes a corrupt copy
// would not reproduce.
var familyPayload = func() []byte {
	r := rand.New(rand.NewPCG(5, 7))
	b := make([]byte, 1500)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}()

func familyPages(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("../../testdata/pages")))
	mux.HandleFunc("/api/items", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"items":["alpha","beta"]}`)
	})
	mux.HandleFunc("/echo-headers", func(w http.ResponseWriter, r *http.Request) {
		h := map[string]string{}
		for k := range r.Header {
			h[k] = r.Header.Get(k)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(h)
	})
	serve := func(name string, data []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			// A hostile suggested name: the server must not use it as a path.
			w.Header().Set("Content-Disposition", `attachment; filename="../../`+name+`"`)
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data)
		}
	}
	mux.HandleFunc("/download/data.bin", serve("data.bin", familyPayload))
	mux.HandleFunc("/download/big.bin", serve("big.bin", bytes.Repeat([]byte("x"), downloadLimit+1000)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func familyServer(t *testing.T, extra ...string) (*mcptest.Client, string) {
	t.Helper()
	args := append([]string{"--caps", allCaps, "--max-download-bytes", strconv.Itoa(downloadLimit)}, extra...)
	return inProcess(t, args...)
}

var linkRE = regexp.MustCompile(`\]\(([^)]+)\)`)

var anyRefRE = regexp.MustCompile(`\[ref=((?:f\d+)?e\d+)\]`)

// refsOf returns a lookup of refs in a snapshot (main-frame refs may carry a
// frame prefix, f2e6, after a cross-process navigation).
func refsOf(t *testing.T, snap string) func(what string) string {
	return func(what string) string {
		t.Helper()
		for _, line := range strings.Split(snap, "\n") {
			if strings.Contains(line, what) {
				if m := anyRefRE.FindStringSubmatch(line); m != nil {
					return m[1]
				}
			}
		}
		t.Fatalf("no ref for %q in snapshot:\n%s", what, snap)
		return ""
	}
}

// linkedFile returns the absolute path of the first file a response links.
func linkedFile(t *testing.T, out string) string {
	t.Helper()
	m := linkRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no file link in:\n%s", out)
	}
	p, err := filepath.Abs(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func eval(t *testing.T, c *mcptest.Client, fn string) string {
	t.Helper()
	return c.MustCall(t, "browser_evaluate", map[string]any{"function": fn})
}

func TestFamilies(t *testing.T) {
	// Routed requests go through the server's route handler: on a loaded
	// machine one took longer than the default 500 ms an action waits for
	// the requests it set off, and the answer showed no change yet. The
	// families are about routes, mocks and files, not that bound.
	// The pad's coordinates are a 1280x720 viewport's.
	c, out := familyServer(t, "--timeout-settle", "5000", "--viewport-size", "1280x720")
	srv := familyPages(t)
	page := srv.URL + "/families.html"
	must(t, c, "browser_navigate", map[string]any{"url": page}, "Family bench")
	// fresh returns refs of a new snapshot of the current page.
	fresh := func(t *testing.T) func(string) string {
		return refsOf(t, c.MustCall(t, "browser_snapshot", nil))
	}

	t.Run("default surface is upstream's", func(t *testing.T) {
		// Covered for the registry in tools; here: the caps reach tools/list.
		list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tool := range list.Tools {
			names[tool.Name] = true
		}
		for _, n := range []string{"browser_cookie_set", "browser_route", "browser_start_tracing", "browser_mouse_click_xy", "browser_pdf_save",
			"browser_verify_value", "browser_wait_for_download", "browser_set_device", "browser_arm_dialog", "browser_take_labeled_screenshot"} {
			if !names[n] {
				t.Errorf("%s missing with --caps %s", n, allCaps)
			}
		}
	})

	t.Run("storage state save clear restore", func(t *testing.T) {
		must(t, c, "browser_cookie_set", map[string]any{"name": "sid", "value": "s1", "httpOnly": true}, "Set cookie sid=", "httpOnly")
		must(t, c, "browser_localstorage_set", map[string]any{"key": "theme", "value": "dark"}, "Set localStorage item")
		must(t, c, "browser_sessionstorage_set", map[string]any{"key": "tab", "value": "2"}, "Set sessionStorage item")
		must(t, c, "browser_cookie_list", map[string]any{"domain": "127.0.0.1"}, `sid="s1"`)
		must(t, c, "browser_cookie_get", map[string]any{"name": "sid"}, `sid="s1"`, "path=/")
		must(t, c, "browser_localstorage_get", map[string]any{"key": "theme"}, `"dark"`)
		must(t, c, "browser_sessionstorage_list", nil, `"tab": "2"`)

		saved := must(t, c, "browser_storage_state", map[string]any{"filename": "state.json"}, "1 cookie(s), localStorage of 1 origin(s)")
		if p := linkedFile(t, saved); p != filepath.Join(out, "state.json") {
			t.Fatalf("state saved to %s", p)
		}

		must(t, c, "browser_cookie_clear", nil, "Cleared 1 cookie(s)")
		must(t, c, "browser_localstorage_clear", nil, "Cleared 1 localStorage item(s)")
		must(t, c, "browser_cookie_list", nil, "No cookies")
		must(t, c, "browser_localstorage_get", map[string]any{"key": "theme"}, "is not set")
		// Written after the save: the restore replaces it.
		must(t, c, "browser_cookie_set", map[string]any{"name": "extra", "value": "x"})
		must(t, c, "browser_localstorage_set", map[string]any{"key": "later", "value": "y"})

		must(t, c, "browser_set_storage_state", map[string]any{"filename": "state.json"}, "Restored 1 cookie(s)")
		list := must(t, c, "browser_cookie_list", nil, `sid="s1"`)
		if strings.Contains(list, "extra") {
			t.Fatalf("restore kept a cookie set after the save:\n%s", list)
		}
		must(t, c, "browser_localstorage_list", nil, `"theme": "dark"`)
		must(t, c, "browser_localstorage_get", map[string]any{"key": "later"}, "is not set")
		if got := eval(t, c, "() => document.cookie"); strings.Contains(got, "sid") {
			t.Fatalf("httpOnly cookie visible to the page: %s", got)
		}

		must(t, c, "browser_cookie_delete", map[string]any{"name": "sid"}, "Deleted 1 cookie(s)")
		must(t, c, "browser_localstorage_delete", map[string]any{"key": "theme"}, "Deleted localStorage item")
		must(t, c, "browser_sessionstorage_clear", nil, "Cleared 1 sessionStorage item(s)")
	})

	t.Run("downloads", func(t *testing.T) {
		ref := fresh(t)
		// A click starts it; the response or the next one reports it.
		first := must(t, c, "browser_click", map[string]any{"target": ref(`link "Get data"`)})
		res := must(t, c, "browser_wait_for_download", map[string]any{"timeout": 20}, "Downloaded ", "(1500 bytes)")
		p := linkedFile(t, res)
		if filepath.Dir(p) != out {
			t.Fatalf("download saved outside the output dir: %s", p)
		}
		if filepath.Base(p) != "data.bin" {
			t.Fatalf("saved as %s, want the sanitised suggested name data.bin", filepath.Base(p))
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, familyPayload) {
			t.Fatalf("download bytes differ (%d bytes, %v)", len(got), err)
		}
		events := first + res + must(t, c, "browser_snapshot", nil)
		if !strings.Contains(events, "Downloading file ") || !strings.Contains(events, `data.bin" (1500 bytes)`) {
			t.Fatalf("no download event under ### Events:\n%s", events)
		}

		res = must(t, c, "browser_download", map[string]any{"url": srv.URL + "/download/data.bin", "filename": "copy.bin"}, "(1500 bytes)", "copy.bin")
		if got, _ := os.ReadFile(filepath.Join(out, "copy.bin")); !bytes.Equal(got, familyPayload) {
			t.Fatalf("browser_download bytes differ (%d bytes)", len(got))
		}
		_ = res
		// The current page stayed where it was.
		must(t, c, "browser_evaluate", map[string]any{"function": "() => location.pathname"}, "/families.html")
		fails(t, c, "browser_download", map[string]any{"url": srv.URL + "/labels.html", "timeout": 5}, "did not start a download")
	})

	t.Run("trace", func(t *testing.T) {
		must(t, c, "browser_start_tracing", nil, "Tracing started")
		fails(t, c, "browser_start_tracing", nil, "already running")
		c.MustCall(t, "browser_navigate", map[string]any{"url": page})
		c.MustCall(t, "browser_click", map[string]any{"target": "text=Load items"})
		res := must(t, c, "browser_stop_tracing", map[string]any{"filename": "run"}, "run.zip", "show-trace")
		entries, events := readTrace(t, linkedFile(t, res))
		for _, want := range []string{"trace.trace", "trace.network"} {
			if !entries[want] {
				t.Errorf("trace zip lacks %s; has %v", want, keys(entries))
			}
		}
		for _, want := range []string{`"method":"goto"`, `"method":"click"`, `"type":"frame-snapshot"`, `"type":"screencast-frame"`} {
			if !strings.Contains(events, want) {
				t.Errorf("trace.trace lacks %s", want)
			}
		}
		fails(t, c, "browser_stop_tracing", nil, "no trace is running")
	})

	t.Run("route mocks and edits", func(t *testing.T) {
		ref := fresh(t)
		must(t, c, "browser_route", map[string]any{"pattern": "**/api/items*", "body": `{"items":["mocked"]}`, "contentType": "application/json"}, "Route added", "mock 200")
		must(t, c, "browser_click", map[string]any{"target": ref(`button "Load items"`)}, "Items mocked")
		must(t, c, "browser_route", map[string]any{"pattern": "**/echo-headers", "headers": []any{"X-Extra: yes"}, "removeHeaders": "x-drop"})
		must(t, c, "browser_route_list", nil, "**/api/items* → mock 200", "(1 hits)", "**/echo-headers → continue")
		must(t, c, "browser_click", map[string]any{"target": ref(`button "Echo headers"`)}, "X-Extra=yes")
		must(t, c, "browser_unroute", map[string]any{"pattern": "**/api/items*"}, "Removed 1 route(s)")
		must(t, c, "browser_click", map[string]any{"target": ref(`button "Load items"`)}, "Items alpha,beta")
		must(t, c, "browser_unroute", nil, "Removed all 1 route(s)")
		must(t, c, "browser_route_list", nil, "No active routes")

		must(t, c, "browser_network_state_set", map[string]any{"state": "offline"}, "offline")
		must(t, c, "browser_evaluate", map[string]any{"function": "() => fetch('/api/items').then(() => 'up', () => 'down')"}, `"down"`)
		must(t, c, "browser_network_state_set", map[string]any{"state": "online"}, "online")
		// Request and response bodies of a captured request.
		list := must(t, c, "browser_network_requests", map[string]any{"static": false}, "/api/items?x=1")
		idx := 0
		for _, l := range strings.Split(list, "\n") {
			if strings.Contains(l, "/api/items?x=1") {
				idx, _ = strconv.Atoi(strings.SplitN(l, ".", 2)[0])
			}
		}
		must(t, c, "browser_network_request", map[string]any{"index": idx, "part": "request-body"}, `"a": 1`)
		must(t, c, "browser_network_request", map[string]any{"index": idx, "part": "response-body"}, `"alpha"`)
	})

	t.Run("seed interactions", func(t *testing.T) {
		ref := fresh(t)
		must(t, c, "browser_scroll_into_view", map[string]any{"target": ref(`button "Far away"`)}, "Scrolled")
		must(t, c, "browser_evaluate", map[string]any{"function": "() => { const r = far.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight }"}, "true")

		f := filepath.Join(out, "up.txt")
		os.WriteFile(f, []byte("x"), 0o644)
		must(t, c, "browser_set_input_files", map[string]any{"target": "#up", "paths": []any{f}}, "Set 1 file(s)", "Chosen up.txt")

		must(t, c, "browser_arm_file_chooser", map[string]any{"paths": []any{f, filepath.Join(out, "state.json")}}, "will get up.txt, state.json")
		res := must(t, c, "browser_click", map[string]any{"target": ref(`button "Pick file"`)})
		if strings.Contains(res, "### Modal state") {
			t.Fatalf("armed chooser still opened a modal state:\n%s", res)
		}
		must(t, c, "browser_wait_for", map[string]any{"text": "Chosen up.txt,state.json"})

		must(t, c, "browser_arm_dialog", map[string]any{"accept": true}, "will be accepted")
		res = must(t, c, "browser_click", map[string]any{"target": ref(`button "Confirm"`)})
		if strings.Contains(res, "### Modal state") {
			t.Fatalf("armed dialog still opened a modal state:\n%s", res)
		}
		must(t, c, "browser_wait_for", map[string]any{"text": "Confirmed"})
		must(t, c, "browser_arm_dialog", map[string]any{"accept": true, "promptText": "Ada"})
		c.MustCall(t, "browser_click", map[string]any{"target": ref(`button "Prompt"`)})
		must(t, c, "browser_wait_for", map[string]any{"text": "Name Ada"})
		// Disarmed after one use: the next dialog is a modal state again.
		must(t, c, "browser_click", map[string]any{"target": ref(`button "Confirm"`)}, "### Modal state")
		must(t, c, "browser_handle_dialog", map[string]any{"accept": false}, "Dismissed")

		must(t, c, "browser_highlight", map[string]any{"target": ref(`button "Save changes"`), "style": "outline-color: red"}, "Highlighted")
		must(t, c, "browser_evaluate", map[string]any{"function": "() => 'highlights=' + document.querySelectorAll(':root > div[aria-hidden=true]').length"}, "highlights=1")
		// The overlay stays out of snapshots.
		if s := must(t, c, "browser_snapshot", nil); strings.Count(s, `button "Save changes"`) != 1 {
			t.Fatalf("highlight overlay changed the snapshot:\n%s", s)
		}
		must(t, c, "browser_hide_highlight", nil, "Removed 1 highlight(s)")
		must(t, c, "browser_hide_highlight", nil, "No highlight")
	})

	t.Run("emulation", func(t *testing.T) {
		must(t, c, "browser_set_device", map[string]any{"device": "Pixel 5"}, "Emulating Pixel 5", "mobile true")
		c.MustCall(t, "browser_navigate", map[string]any{"url": page})
		must(t, c, "browser_evaluate", map[string]any{"function": "() => [screen.width, devicePixelRatio, navigator.userAgent.includes('Android'), navigator.maxTouchPoints > 0].join(' ')"}, `"393 2.75 true true"`)
		fails(t, c, "browser_set_device", map[string]any{"device": "Pixel 99"}, "unknown device")
		must(t, c, "browser_set_device", map[string]any{"device": ""}, "Device emulation ended")
		must(t, c, "browser_evaluate", map[string]any{"function": "() => [innerWidth, devicePixelRatio, navigator.userAgent.includes('Android')].join(' ')"}, `"1280 1 false"`)

		must(t, c, "browser_set_timezone", map[string]any{"timezoneId": "Asia/Tokyo"}, "Asia/Tokyo")
		must(t, c, "browser_evaluate", map[string]any{"function": "() => Intl.DateTimeFormat().resolvedOptions().timeZone"}, `"Asia/Tokyo"`)
		fails(t, c, "browser_set_timezone", map[string]any{"timezoneId": "Mars/Olympus"}, "is unknown")
		must(t, c, "browser_set_locale", map[string]any{"locale": "de-DE"}, "de-DE")
		must(t, c, "browser_evaluate", map[string]any{"function": "() => [navigator.language, new Intl.NumberFormat().format(1234.5)].join(' ')"}, `"de-DE 1.234,5"`)

		must(t, c, "browser_set_geolocation", map[string]any{"latitude": 48.85, "longitude": 2.35}, "48.85")
		must(t, c, "browser_evaluate", map[string]any{"function": "() => new Promise(r => navigator.geolocation.getCurrentPosition(p => r(p.coords.latitude + ',' + p.coords.longitude), e => r('error ' + e.message)))"}, `"48.85,2.35"`)
		fails(t, c, "browser_set_geolocation", map[string]any{"latitude": 1}, "both latitude and longitude")
		must(t, c, "browser_set_geolocation", nil, "Cleared")

		fails(t, c, "browser_evaluate_with_timeout", map[string]any{"function": "() => { for (;;) {} }", "timeout": 0.5}, "it was stopped")
		// The page survived the runaway script.
		must(t, c, "browser_evaluate_with_timeout", map[string]any{"function": "() => 6 * 7", "timeout": 2}, "42")
	})

	t.Run("vision and pdf", func(t *testing.T) {
		// #pad is fixed at the top right of a 1280x720 viewport.
		must(t, c, "browser_mouse_click_xy", map[string]any{"x": 1170, "y": 60}, "Clicked at 1170, 60")
		must(t, c, "browser_evaluate", map[string]any{"function": "() => padout.textContent"}, `"down 0 1170,60 up click1"`)
		c.MustCall(t, "browser_mouse_move_xy", map[string]any{"x": 1100, "y": 50})
		c.MustCall(t, "browser_mouse_down", map[string]any{"button": "right"})
		c.MustCall(t, "browser_mouse_up", map[string]any{"button": "right"})
		must(t, c, "browser_evaluate", map[string]any{"function": "() => padout.textContent"}, `"down 2 1100,50 up"`)
		must(t, c, "browser_mouse_drag_xy", map[string]any{"startX": 1100, "startY": 30, "endX": 1200, "endY": 90}, "Dragged")
		must(t, c, "browser_mouse_wheel", map[string]any{"deltaX": 0, "deltaY": 120})
		must(t, c, "browser_evaluate", map[string]any{"function": "() => padout.textContent"}, `"wheel 120"`)

		res := must(t, c, "browser_pdf_save", map[string]any{"filename": "page.pdf"}, "page.pdf")
		if b, err := os.ReadFile(linkedFile(t, res)); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Fatalf("not a PDF: %v", err)
		}
	})

	t.Run("testing", func(t *testing.T) {
		c.MustCall(t, "browser_navigate", map[string]any{"url": page})
		r := fresh(t)
		must(t, c, "browser_generate_locator", map[string]any{"target": r(`button "Load items"`)}, `getByRole('button', { name: 'Load items' })`)
		must(t, c, "browser_generate_locator", map[string]any{"target": "[data-testid=save-btn]"}, `getByTestId('save-btn')`)
		must(t, c, "browser_verify_element_visible", map[string]any{"role": "heading", "accessibleName": "Family bench"}, "is visible")
		fails(t, c, "browser_verify_element_visible", map[string]any{"role": "button", "accessibleName": "Nope"}, "is not visible")
		must(t, c, "browser_verify_text_visible", map[string]any{"text": "Family bench"}, "is visible")
		fails(t, c, "browser_verify_text_visible", map[string]any{"text": "Not on the page"}, "is not visible")
		must(t, c, "browser_verify_list_visible", map[string]any{"element": "Fruits", "target": r(`list "Fruits"`), "items": []any{"Apple", "Plum"}}, "shows all 2")
		fails(t, c, "browser_verify_list_visible", map[string]any{"element": "Fruits", "target": r(`list "Fruits"`), "items": []any{"Apple", "Kiwi"}}, `"Kiwi"`)
		must(t, c, "browser_verify_value", map[string]any{"type": "textbox", "element": "Nick", "target": "#nick", "value": "hello"}, `has value "hello"`)
		must(t, c, "browser_verify_value", map[string]any{"type": "checkbox", "element": "Agree", "target": "#agree", "value": "true"})
		must(t, c, "browser_verify_value", map[string]any{"type": "combobox", "element": "Shade", "target": "#shade", "value": "Green"})
		fails(t, c, "browser_verify_value", map[string]any{"type": "textbox", "element": "Nick", "target": "#nick", "value": "bye"}, `expected "bye"`)
	})

	t.Run("labelled screenshot", func(t *testing.T) {
		c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/labels.html"})
		res := c.Call(t, "browser_take_labeled_screenshot", map[string]any{})
		text := mcptest.Text(res)
		if res.IsError || len(res.Content) != 2 {
			t.Fatalf("labelled screenshot: %s", text)
		}
		want := map[string][4]int{`button "Alpha"`: {40, 60, 120, 40}, `link "Beta link"`: {300, 200, 80, 30}, `textbox "Gamma"`: {100, 400, 200, 32}}
		img := res.Content[1].(mcp.ImageContent)
		shot := decodePNG(t, img.Data)
		for what, box := range want {
			line := lineWith(t, text, what)
			if !strings.Contains(line, fmt.Sprintf("[box=%d,%d,%d,%d]", box[0], box[1], box[2], box[3])) {
				t.Errorf("label of %s: %q, want box %v", what, line, box)
			}
			// The label's frame is drawn on the element's left edge.
			x, y := box[0], box[1]+box[3]/2
			if r, g, b, _ := shot.At(x, y).RGBA(); r>>8 < 200 || g>>8 > 60 || b>>8 < 200 {
				t.Errorf("no label frame at %d,%d for %s: rgb %d,%d,%d", x, y, what, r>>8, g>>8, b>>8)
			}
		}
		if strings.Contains(text, "Below the fold") {
			t.Errorf("labelled an element outside the viewport:\n%s", text)
		}
		must(t, c, "browser_evaluate", map[string]any{"function": "() => 'overlays=' + document.querySelectorAll(':root > div').length"}, "overlays=0")
		full := must(t, c, "browser_take_labeled_screenshot", map[string]any{"fullPage": true, "filename": "full.png", "maxLabels": 10}, "Below the fold", "[box=20,1500,100,40]")
		if st, err := os.Stat(filepath.Join(out, "full.png")); err != nil || st.Size() == 0 {
			t.Fatalf("full-page labelled screenshot: %v\n%s", err, full)
		}
	})

	t.Run("trace saved when the browser closes", func(t *testing.T) {
		before, _ := filepath.Glob(filepath.Join(out, "trace-*.zip"))
		must(t, c, "browser_start_tracing", nil)
		c.MustCall(t, "browser_navigate", map[string]any{"url": page})
		must(t, c, "browser_close", nil, "Closed the browser")
		after, _ := filepath.Glob(filepath.Join(out, "trace-*.zip"))
		if len(after) != len(before)+1 {
			t.Fatalf("no trace saved on close: %v", after)
		}
		entries, events := readTrace(t, after[len(after)-1])
		if !entries["trace.trace"] || !strings.Contains(events, `"method":"goto"`) {
			t.Fatalf("trace saved on close lacks its actions: %v", keys(entries))
		}
		// A new browser: no trace is running in it.
		fails(t, c, "browser_stop_tracing", nil, "no trace is running")
	})
}

// TestFamiliesBadInput checks the refusals the issue lists: each is a clear
// isError, writes nothing outside the output directory, and leaves the
// session working.
func TestFamiliesBadInput(t *testing.T) {
	c, out := familyServer(t)
	srv := familyPages(t)
	c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/families.html"})
	parent := filepath.Dir(out)
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(out, "bad.json"), []byte(`{"cookies": "nope"}`), 0o644)
	os.WriteFile(filepath.Join(out, "broken.json"), []byte(`{"cookies": [`), 0o644)
	os.Symlink("/etc/hostname", filepath.Join(out, "link.json"))
	os.WriteFile(filepath.Join(out, "cookie.json"), []byte(`{"cookies": [{"name": "a", "value": "b", "domain": "x.test", "path": "/", "sameSite": "Sometimes"}], "origins": []}`), 0o644)
	cases := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"cookie for a foreign domain", "browser_cookie_set", map[string]any{"name": "a", "value": "b", "domain": "example.org"}, "not the current page's site"},
		{"cookie for a parent of an IP", "browser_cookie_set", map[string]any{"name": "a", "value": "b", "domain": "0.0.1"}, "not the current page's site"},
		{"storage state of the wrong shape", "browser_set_storage_state", map[string]any{"filename": "bad.json"}, `not a storage state file: "cookies" must be an array`},
		{"storage state not JSON", "browser_set_storage_state", map[string]any{"filename": "broken.json"}, "not a storage state file: not JSON"},
		{"storage state with a bad cookie", "browser_set_storage_state", map[string]any{"filename": "cookie.json"}, `"sameSite" must be Strict, Lax or None`},
		{"storage state missing", "browser_set_storage_state", map[string]any{"filename": "missing.json"}, "no such file"},
		{"storage state outside the output dir", "browser_set_storage_state", map[string]any{"filename": "../escape.json"}, "outside the output directory"},
		{"storage state through a symlink out", "browser_set_storage_state", map[string]any{"filename": "link.json"}, "outside the output directory"},
		{"storage state saved outside the output dir", "browser_storage_state", map[string]any{"filename": "../escape.json"}, "outside the output directory"},
		{"download larger than the limit", "browser_download", map[string]any{"url": srv.URL + "/download/big.bin", "timeout": 20}, fmt.Sprintf("this session's downloads may take %d bytes in all", downloadLimit)},
		{"download of a javascript URL", "browser_download", map[string]any{"url": "javascript:alert(1)"}, "javascript:"},
		{"no download to wait for", "browser_wait_for_download", map[string]any{"timeout": 0.3}, "no download started"},
		{"trace stopped twice", "browser_stop_tracing", nil, "no trace is running"},
		{"route pattern is a regexp", "browser_route", map[string]any{"pattern": "^https?://.*/api$", "body": "x"}, "looks like a regular expression"},
		{"route pattern with a regexp class", "browser_route", map[string]any{"pattern": `**/item/\d+`, "body": "x"}, "looks like a regular expression"},
		{"route pattern is a path", "browser_route", map[string]any{"pattern": "/api/items", "body": "x"}, "would never match"},
		{"route pattern with an open brace", "browser_route", map[string]any{"pattern": "**/*.{png,jpg", "body": "x"}, "{ without }"},
		{"route that does nothing", "browser_route", map[string]any{"pattern": "**/x"}, "would do nothing"},
		{"route header without a colon", "browser_route", map[string]any{"pattern": "**/x", "headers": []any{"nocolon"}}, `"Name: Value"`},
		{"upload outside the allowed roots", "browser_set_input_files", map[string]any{"target": "#up", "paths": []any{"/etc/hostname"}}, "outside the allowed roots"},
		{"armed upload outside the allowed roots", "browser_arm_file_chooser", map[string]any{"paths": []any{"/etc/hostname"}}, "outside the allowed roots"},
		{"relative upload path", "browser_set_input_files", map[string]any{"target": "#up", "paths": []any{"up.txt"}}, "must be absolute"},
		{"trace name outside the output dir", "browser_stop_tracing", map[string]any{"filename": "../t.zip"}, "no trace is running"},
		{"pdf outside the output dir", "browser_pdf_save", map[string]any{"filename": "../x.pdf"}, "outside the output directory"},
		{"unknown argument", "browser_cookie_list", map[string]any{"url": "x"}, `unknown argument "url"`},
		{"bad sameSite", "browser_cookie_set", map[string]any{"name": "a", "value": "b", "sameSite": "Sometimes"}, "must be one of Strict, Lax, None"},
		{"bad network state", "browser_network_state_set", map[string]any{"state": "flaky"}, "must be one of online, offline"},
		{"coordinates missing", "browser_mouse_click_xy", map[string]any{"x": 1}, `missing required argument "y"`},
		{"evaluate timeout too long", "browser_evaluate_with_timeout", map[string]any{"function": "() => 1", "timeout": 600}, "at most 120"},
		{"labels over the limit", "browser_take_labeled_screenshot", map[string]any{"maxLabels": 500}, "at most 150"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fails(t, c, tc.tool, tc.args, tc.want)
			must(t, c, "browser_evaluate", map[string]any{"function": "() => 'alive=' + (1 + 1)"}, "alive=2")
		})
	}
	t.Run("trace stopped twice after a start", func(t *testing.T) {
		must(t, c, "browser_start_tracing", nil)
		fails(t, c, "browser_stop_tracing", map[string]any{"filename": "../t.zip"}, "outside the output directory")
		must(t, c, "browser_stop_tracing", nil, ".zip")
		fails(t, c, "browser_stop_tracing", nil, "no trace is running")
	})
	// The names the refused calls asked for, one level up and at the root
	// of the temp dir: none exists.
	for _, name := range []string{"escape.json", "t.zip", "x.pdf", "big.bin", "data.bin"} {
		for _, dir := range []string{parent, filepath.Dir(parent)} {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				t.Errorf("written outside the output dir: %s", filepath.Join(dir, name))
			}
		}
	}
	files, _ := os.ReadDir(out)
	for _, f := range files {
		if strings.HasPrefix(f.Name(), "big") {
			t.Errorf("the refused download was kept: %s", f.Name())
		}
	}
}

// TestStorageIsolation checks that what one session writes, another does
// not see: two servers (two sessions), the same site.
func TestStorageIsolation(t *testing.T) {
	srv := familyPages(t)
	page := srv.URL + "/families.html"
	a, _ := familyServer(t)
	b, outB := familyServer(t)
	a.MustCall(t, "browser_navigate", map[string]any{"url": page})
	b.MustCall(t, "browser_navigate", map[string]any{"url": page})
	must(t, a, "browser_cookie_set", map[string]any{"name": "who", "value": "A"}, "Set cookie who=")
	must(t, a, "browser_localstorage_set", map[string]any{"key": "who", "value": "A"})
	must(t, a, "browser_cookie_list", nil, `who="A"`)
	must(t, b, "browser_cookie_list", nil, "No cookies")
	must(t, b, "browser_localstorage_get", map[string]any{"key": "who"}, "is not set")
	if got := eval(t, b, "() => document.cookie"); strings.Contains(got, "who") {
		t.Fatalf("session B sees A's cookie: %s", got)
	}

	// Closing a session saves its running trace.
	must(t, b, "browser_start_tracing", nil)
	b.MustCall(t, "browser_click", map[string]any{"target": "text=Load items"})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	traces, _ := filepath.Glob(filepath.Join(outB, "trace-*.zip"))
	if len(traces) != 1 {
		t.Fatalf("closing the session saved %d traces", len(traces))
	}
	if _, events := readTrace(t, traces[0]); !strings.Contains(events, `"method":"click"`) {
		t.Fatalf("trace saved on session close lacks the click")
	}
}

func readTrace(t *testing.T, path string) (map[string]bool, string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("open trace %s: %v", path, err)
	}
	defer zr.Close()
	entries := map[string]bool{}
	var events string
	for _, f := range zr.File {
		entries[f.Name] = true
		if strings.HasSuffix(f.Name, ".trace") {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			events += string(b)
		}
	}
	return entries, events
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func lineWith(t *testing.T, text, what string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, what) {
			return l
		}
	}
	t.Fatalf("no line with %q in:\n%s", what, text)
	return ""
}

func decodePNG(t *testing.T, b64 string) image.Image {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	return img
}
