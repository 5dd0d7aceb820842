package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// TestActionResponsesShowEveryChange: through a real MCP client, an action
// that changed nothing answers "No change" (its snapshot skipped), typing
// with no other effect says so, and an action that changed any one thing
// — attribute, title, URL hash, value, checked, focus, a same-origin or a
// cross-process frame, a style rule, a popover, a shadow root, a :hover
// menu, an update its handler left to a zero timer — shows that change in
// its response.
func TestActionResponsesShowEveryChange(t *testing.T) {
	url := mcptest.ChangesPage(t)
	c, _ := inProcess(t)
	// open loads the page (without its cross-site frame unless cross) and
	// returns its snapshot.
	open := func(t *testing.T, cross bool) string {
		t.Helper()
		must(t, c, "browser_navigate", map[string]any{"url": url + "/"})
		if !cross {
			must(t, c, "browser_evaluate", map[string]any{"function": "() => document.querySelector('iframe[title=cross]').remove()"})
		}
		for range 100 {
			snap := must(t, c, "browser_snapshot", map[string]any{})
			if !cross || strings.Contains(snap, "cross-site frame") {
				return snap
			}
		}
		t.Fatal("the cross-site frame never loaded")
		return ""
	}
	for _, tc := range []struct {
		name, button string
		wants        []string
	}{
		{"nothing", "Nothing", []string{"- No change in the page snapshot"}},
		{"attribute", "Attribute", []string{`button "Disclosure" [expanded]`}},
		{"title", "Title", []string{"- Page Title: Retitled"}},
		{"hash", "Hash", []string{"- Page URL: " + url + "/#moved"}},
		{"value", "Value", []string{"set by script"}},
		{"checked", "Check", []string{`checkbox "Agree" [checked]`}},
		{"focus", "Focus", []string{`- Focus moved to: textbox "Other"`}},
		{"same-origin frame", "Same frame", []string{"same-origin frame changed"}},
		{"cross-process frame", "Cross frame", []string{"cross-site frame changed"}},
		{"style rule", "Style rule", []string{"Visible until a rule hides it"}},
		{"popover", "Popover", []string{"Popover body"}},
		{"shadow root", "Shadow", []string{"shadow changed"}},
		// The page renders what it fetched a moment after the answer:
		// the action waits for the request, then for the page to use it.
		{"fetch then render", "Fetch", []string{"Loaded alpha,beta"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := open(t, tc.name == "cross-process frame")
			ref := refFor(t, snap, `button "`+tc.button+`"`)
			out := must(t, c, "browser_click", map[string]any{"element": tc.button, "target": ref}, tc.wants...)
			// A new title or URL is in the Page section; the snapshot
			// itself holds neither.
			if tc.name != "nothing" && tc.name != "title" && tc.name != "hash" && strings.Contains(out, "No change in the page snapshot") {
				t.Fatalf("the change was reported as none:\n%s", out)
			}
		})
	}
	// A handler that leaves its update to a zero timer: the action's
	// read lets the tasks the page queued run first, every time.
	t.Run("deferred to a zero timer", func(t *testing.T) {
		ref := refFor(t, open(t, false), `button "Deferred"`)
		for i := 1; i <= 10; i++ {
			must(t, c, "browser_click", map[string]any{"element": "Deferred", "target": ref}, fmt.Sprintf("Deferred %d", i))
		}
	})
	t.Run(":hover menu", func(t *testing.T) {
		open(t, false)
		must(t, c, "browser_hover", map[string]any{"element": "Menu", "target": "text=Menu"}, "Hover item")
	})
	t.Run("typing", func(t *testing.T) {
		snap := open(t, false)
		must(t, c, "browser_type", map[string]any{"element": "Quiet", "target": refFor(t, snap, `textbox "Quiet"`), "text": "hello"},
			"- No change in the page snapshot but the typed text")
		// The next snapshot has the value the skipped one would have shown.
		if !hasLine(must(t, c, "browser_snapshot", map[string]any{}), `textbox "Quiet"`, ": hello") {
			t.Fatal(`the snapshot after typing lacks textbox "Quiet": hello`)
		}
		out := must(t, c, "browser_type", map[string]any{"element": "Live", "target": refFor(t, snap, `textbox "Live"`), "text": "abc"}, "3 chars")
		if strings.Contains(out, "but the typed text") {
			t.Fatalf("typing that changed the page was reported as typing only:\n%s", out)
		}
	})
}

// hasLine reports whether a line of text holds all of parts.
func hasLine(text string, parts ...string) bool {
	for _, l := range strings.Split(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}
