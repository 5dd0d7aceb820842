package server_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// within calls a tool and fails the test when it has not answered within d:
// the deadlines are generous (several times the goal, and below what the
// call took when the page stalled it), so they fail on a stall, not on a
// slow machine.
func within(t *testing.T, c *mcptest.Client, d time.Duration, tool string, args map[string]any) (text string, isError bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("%s(%v) did not answer within %s: the page stalled it", tool, args, d)
	}
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return mcptest.Text(res), res.IsError
}

var pressMeRE = regexp.MustCompile(`button "Press me" \[ref=(\w+)\]`)

func pressMeRef(t *testing.T, snapshot string) string {
	t.Helper()
	m := pressMeRE.FindStringSubmatch(snapshot)
	if m == nil {
		t.Fatalf("no Press me button in:\n%s", snapshot)
	}
	return m[1]
}

func wantIn(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Fatalf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func wantNotIn(t *testing.T, what, text string, nots ...string) {
	t.Helper()
	for _, w := range nots {
		if strings.Contains(text, w) {
			t.Fatalf("%s has %q:\n%s", what, w, text)
		}
	}
}

// usable checks the session still works after a hostile page: a navigation
// to an ordinary page of the same site answers with its content.
func usable(t *testing.T, c *mcptest.Client, h *mcptest.Hostile) {
	t.Helper()
	out, isErr := within(t, c, 15*time.Second, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostilePlain})
	if isErr {
		t.Fatalf("navigate to the plain page after a hostile one failed:\n%s", out)
	}
	wantIn(t, "navigate to the plain page", out, "An ordinary page.", `heading "`+mcptest.HostileHeading+`"`)
}

// TestHostilePagesDoNotStall: frames whose server never answers, frames
// that never finish, subresources that never arrive, a main thread busy
// forever and a field whose input handler never ends each get an answer
// well before the timeouts they used to run into, with the content that is
// there or a message that says what happened, and the session stays usable
// after each.
func TestHostilePagesDoNotStall(t *testing.T) {
	h := mcptest.HostilePages(t)
	c, _ := inProcess(t)
	// Launch the browser outside any deadline.
	must(t, c, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostilePlain}, "An ordinary page.")

	t.Run("frames whose server never answers", func(t *testing.T) {
		out, isErr := within(t, c, 9*time.Second, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostileSilentFrames})
		if isErr {
			t.Fatalf("navigate failed:\n%s", out)
		}
		wantIn(t, "navigate", out, "Two frames that never answer", "still loading", "2 frames not loaded")
		if h.SilentConns() < 2 {
			t.Fatalf("the silent server saw %d connections; the frames did not ask it", h.SilentConns())
		}
		var snap string
		for i := range 3 {
			snap, isErr = within(t, c, 8*time.Second, "browser_snapshot", nil)
			if isErr {
				t.Fatalf("snapshot %d failed:\n%s", i+1, snap)
			}
			wantIn(t, "snapshot", snap, `button "Press me"`, "- iframe [ref=", "2 frames not loaded yet")
		}
		out, isErr = within(t, c, 8*time.Second, "browser_click", map[string]any{"element": "Press me", "target": pressMeRef(t, snap)})
		if isErr {
			t.Fatalf("click failed:\n%s", out)
		}
		wantIn(t, "click", out, `heading "`+mcptest.HostileClicked+`"`)
		usable(t, c, h)
	})

	t.Run("frames that never finish", func(t *testing.T) {
		out, isErr := within(t, c, 9*time.Second, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostileEndlessFrames})
		if isErr {
			t.Fatalf("navigate failed:\n%s", out)
		}
		snap, isErr := within(t, c, 8*time.Second, "browser_snapshot", nil)
		if isErr {
			t.Fatalf("snapshot failed:\n%s", snap)
		}
		// Their documents arrived in part: the snapshot shows that part.
		if n := strings.Count(snap, "paragraph [ref=f"); n < 2 {
			t.Fatalf("want the two frames' partial content, got %d frame paragraphs:\n%s", n, snap)
		}
		wantNotIn(t, "snapshot", snap, "not loaded yet")
		out, isErr = within(t, c, 8*time.Second, "browser_click", map[string]any{"element": "Press me", "target": pressMeRef(t, snap)})
		if isErr {
			t.Fatalf("click failed:\n%s", out)
		}
		wantIn(t, "click", out, mcptest.HostileClicked)
		usable(t, c, h)
	})

	t.Run("subresources that never arrive", func(t *testing.T) {
		out, isErr := within(t, c, 9*time.Second, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostileStalledSub})
		if isErr {
			t.Fatalf("navigate failed:\n%s", out)
		}
		wantIn(t, "navigate", out, "never arrive", "still loading", "pending")
		usable(t, c, h)
	})

	t.Run("main thread busy after load", func(t *testing.T) {
		out, _ := within(t, c, 15*time.Second, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostileBusyAfterLoad})
		wantIn(t, "navigate", out, "not responding")
		wantNotIn(t, "navigate", out, "element may be hidden", "Page Title: Plain")
		for range 2 {
			snap, isErr := within(t, c, 9*time.Second, "browser_snapshot", nil)
			if !isErr {
				t.Fatalf("snapshot of a busy page succeeded?\n%s", snap)
			}
			wantIn(t, "snapshot", snap, "the page is not responding (its main thread is busy)", "browser_navigate")
			wantNotIn(t, "snapshot", snap, "element may be hidden")
		}
		usable(t, c, h)
	})

	t.Run("typing into a disabled field, and into one whose script never ends", func(t *testing.T) {
		out, isErr := within(t, c, 15*time.Second, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostileBusyOnInput})
		if isErr {
			t.Fatalf("navigate failed:\n%s", out)
		}
		ref := func(name string) string {
			m := regexp.MustCompile(`textbox "` + name + `"(?: \[disabled\])? \[ref=((?:f\d+)?e\d+)\]`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no %s field in:\n%s", name, out)
			}
			return m[1]
		}
		locked, trap := ref("Locked"), ref("Trap")
		// A field that never becomes editable is the element's fault,
		// on a page that answers.
		out, isErr = within(t, c, 20*time.Second, "browser_type", map[string]any{"element": "Locked", "target": locked, "text": "x"})
		if !isErr {
			t.Fatalf("typing into a disabled field succeeded?\n%s", out)
		}
		wantIn(t, "type into a disabled field", out, "disabled")
		wantNotIn(t, "type into a disabled field", out, "not responding")
		out, isErr = within(t, c, 20*time.Second, "browser_type", map[string]any{"element": "Trap", "target": trap, "text": "x"})
		if !isErr {
			t.Fatalf("typing into a field whose handler never ends succeeded?\n%s", out)
		}
		wantIn(t, "type", out, "not responding", "browser_navigate")
		wantNotIn(t, "type", out, "element may be hidden")
		usable(t, c, h)
	})

	t.Run("main thread busy before load", func(t *testing.T) {
		out, isErr := within(t, c, 15*time.Second, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostileBusyBeforeLoad})
		if !isErr {
			t.Fatalf("navigate to a page that never loads succeeded?\n%s", out)
		}
		wantIn(t, "navigate", out, "did not finish loading", "not responding")
		wantNotIn(t, "navigate", out, "element may be hidden")
		snap, isErr := within(t, c, 9*time.Second, "browser_snapshot", nil)
		if !isErr {
			t.Fatalf("snapshot of a busy page succeeded?\n%s", snap)
		}
		wantIn(t, "snapshot", snap, "not responding")
		usable(t, c, h)
	})
}
