package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// hostileReport is what testdata/pages/hostile.html noted in its own world.
type hostileReport struct {
	Calls      []string `json:"calls"`
	Attrs      []string `json:"attrs"`
	NewGlobals []string `json:"newGlobals"`
	Left       []string `json:"left"`
	Input      []struct {
		Type    string  `json:"type"`
		Trusted bool    `json:"trusted"`
		Target  string  `json:"target"`
		ScreenX float64 `json:"screenX"`
		ScreenY float64 `json:"screenY"`
		ClientX float64 `json:"clientX"`
		ClientY float64 `json:"clientY"`
		Files   *int    `json:"files"`
		Key     string  `json:"key"`
		Code    string  `json:"code"`
		KeyCode int     `json:"keyCode"`
	} `json:"input"`
	Window struct {
		ScreenX, ScreenY        float64
		OuterWidth, OuterHeight float64
		InnerWidth, InnerHeight float64
	} `json:"window"`
}

var modeRefRE = regexp.MustCompile(`\[ref=(\w+)\]`)

// modeRef is the ref on the first line of snapshot naming what (any mode).
func modeRef(t *testing.T, snapshot, what string) string {
	t.Helper()
	for _, line := range strings.Split(snapshot, "\n") {
		if strings.Contains(line, what) {
			if m := modeRefRE.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no ref for %q in snapshot:\n%s", what, snapshot)
	return ""
}

// TestHostilePageSeesNothingOfOurs: an agent works a page that wraps the DOM
// and JavaScript APIs a driver's scripts use (createElement, querySelector,
// getElementById, getElementsByClassName, attachShadow, Error.prototype.name,
// console.debug, dispatchEvent, DragEvent, …), watches its elements'
// attributes and keeps the input events it gets: snapshots in all three
// modes, clicks by each mode's ref, typing, a labelled screenshot, a
// highlight, a drop and tabs. The page sees no call of ours, no attribute
// change, no new global, no node of ours left, and only trusted input, with
// a pointer that moves before it clicks.
func TestHostilePageSeesNothingOfOurs(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	defer srv.Close()
	c, tmp := inProcess(t, "--caps", "vision,devtools,storage,testing")
	url := srv.URL + "/hostile.html"
	snap := must(t, c, "browser_navigate", map[string]any{"url": url}, "Hostile")

	must(t, c, "browser_click", map[string]any{"target": modeRef(t, snap, `button "Press me"`)}, "Pressed")
	role := must(t, c, "browser_snapshot", map[string]any{"mode": "role"})
	must(t, c, "browser_click", map[string]any{"target": modeRef(t, role, `button "Second button"`)}, "Second")
	aria := must(t, c, "browser_snapshot", map[string]any{"mode": "aria"})
	must(t, c, "browser_click", map[string]any{"target": modeRef(t, aria, `button "Press me"`)}, "Pressed")
	must(t, c, "browser_type", map[string]any{"target": modeRef(t, aria, `textbox "Name"`), "text": "Ada"})
	must(t, c, "browser_hover", map[string]any{"target": modeRef(t, aria, `link "More"`)})
	snap = must(t, c, "browser_snapshot", nil)
	must(t, c, "browser_type", map[string]any{"target": modeRef(t, snap, `textbox "Name"`), "text": "Bo"})

	must(t, c, "browser_press_key", map[string]any{"key": "ArrowLeft"})
	must(t, c, "browser_verify_value", map[string]any{"type": "combobox", "element": "Shade", "target": "#shade", "value": "Green"})
	must(t, c, "browser_localstorage_set", map[string]any{"key": "theme", "value": "dark"})
	must(t, c, "browser_localstorage_get", map[string]any{"key": "theme"}, `"dark"`)
	must(t, c, "browser_localstorage_clear", nil)

	must(t, c, "browser_take_labeled_screenshot", map[string]any{})
	must(t, c, "browser_highlight", map[string]any{"target": modeRef(t, snap, `button "Second button"`)}, "Highlighted")
	must(t, c, "browser_hide_highlight", nil, "Removed 1 highlight(s)")

	out := filepath.Join(tmp, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(out, "note.txt")
	if err := os.WriteFile(f, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, c, "browser_drop", map[string]any{"target": "#drop", "paths": []any{f}, "data": map[string]any{"text/plain": "hi"}}, "Dropped 1 hi")
	// A target that does not take drops refuses it, as Playwright's drop says.
	if res := c.Call(t, "browser_drop", map[string]any{"target": "#out", "data": map[string]any{"text/plain": "hi"}}); !res.IsError || !strings.Contains(mcptest.Text(res), "did not accept the drop") {
		t.Errorf("a drop onto a target that does not take it: %s", mcptest.Text(res))
	}

	must(t, c, "browser_tabs", map[string]any{"action": "new"})
	must(t, c, "browser_tabs", map[string]any{"action": "list"})
	must(t, c, "browser_tabs", map[string]any{"action": "close", "index": 1})
	must(t, c, "browser_tabs", map[string]any{"action": "select", "index": 0}, "Hostile")
	must(t, c, "browser_snapshot", map[string]any{"mode": "aria"})

	res := must(t, c, "browser_evaluate", map[string]any{"function": "() => window.hostile.report()"})
	i, j := strings.Index(res, `"{`), strings.LastIndex(res, `}"`)
	if i < 0 || j < i {
		t.Fatalf("no report in:\n%s", res)
	}
	var raw string
	if err := json.Unmarshal([]byte(res[i:j+2]), &raw); err != nil {
		t.Fatalf("report: %v in\n%s", err, res)
	}
	var r hostileReport
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("report: %v in\n%s", err, raw)
	}
	if len(r.Calls) > 0 {
		t.Errorf("the page's own world saw calls of ours: %q", r.Calls)
	}
	if len(r.Attrs) > 0 {
		t.Errorf("attributes of the page's elements changed, or ours appeared: %q", r.Attrs)
	}
	if len(r.NewGlobals) > 0 {
		t.Errorf("new globals in the page's world: %q", r.NewGlobals)
	}
	if len(r.Left) > 0 {
		t.Errorf("nodes of ours left in the page: %q", r.Left)
	}
	moved := false
	clicks, drops, keys := 0, 0, 0
	for _, e := range r.Input {
		if !e.Trusted {
			t.Errorf("untrusted %s on #%s", e.Type, e.Target)
		}
		switch e.Type {
		case "mousemove":
			moved = true
		case "click":
			clicks++
			if !moved {
				t.Errorf("a click on #%s with no mousemove before it", e.Target)
			}
			moved = false
			t.Logf("click on #%s: client %v,%v screen %v,%v", e.Target, e.ClientX, e.ClientY, e.ScreenX, e.ScreenY)
			// A real window's content sits below its toolbar: the screen
			// point is the client point plus the window's position and
			// the frame around the content.
			w := r.Window
			dx := w.ScreenX + (w.OuterWidth-w.InnerWidth)/2
			dy := w.ScreenY + w.OuterHeight - w.InnerHeight
			if e.ScreenX-e.ClientX != dx || e.ScreenY-e.ClientY != dy || dy == 0 {
				t.Errorf("click on #%s: screen %v,%v for client %v,%v in window %+v, want the client point plus %v,%v (not 0)",
					e.Target, e.ScreenX, e.ScreenY, e.ClientX, e.ClientY, w, dx, dy)
			}
		case "keydown":
			keys++
			if e.Key != "ArrowLeft" || e.Code != "ArrowLeft" || e.KeyCode != 37 {
				t.Errorf("keydown key %q code %q keyCode %d, want ArrowLeft's", e.Key, e.Code, e.KeyCode)
			}
		case "drop":
			drops++
			if e.Files == nil || *e.Files != 1 {
				t.Errorf("drop with files %v, want 1", e.Files)
			}
		}
	}
	if clicks < 3 || drops != 1 || keys != 1 {
		t.Errorf("the page got %d clicks, %d drops and %d keydowns, want 3 or more, 1 and 1: %+v", clicks, drops, keys, r.Input)
	}
	t.Logf("window: %+v", r.Window)

	// The wrappers work: a call from the page's own world is noted.
	res = must(t, c, "browser_evaluate", map[string]any{"function": "() => { document.querySelector('h1'); return window.hostile.report() }"})
	if !strings.Contains(res, "document.querySelector") {
		t.Fatalf("the page's wrappers do not note calls:\n%s", res)
	}
}
