package server_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// appAgent is an agent that reads only the answers: it finds every ref it
// uses in an answer it got (newest first), and keeps its picture of the
// list (which item titles show, and the counter) from those answers alone:
// a whole page (a yaml snapshot) replaces the picture, a diff's "- " and
// "+ " lines remove and add items, in order (a changed line is both).
type appAgent struct {
	t       *testing.T
	c       *mcptest.Client
	titles  []string
	answers []string
	shown   map[string]bool
	counter string
	chars   int
	steps   []string
}

// counterRE finds the counter in a line, or in a yaml snapshot where
// "<strong>2</strong> items left" is a strong line and a text line.
var counterRE = regexp.MustCompile(`(\d+)"?(?:\n\s*- text:)?\s*(items?) left`)

func (a *appAgent) call(tool string, args map[string]any) string {
	a.t.Helper()
	out := a.c.MustCall(a.t, tool, args)
	n := utf8.RuneCountInString(out)
	a.chars += n
	a.steps = append(a.steps, fmt.Sprintf("%s %v: %d", tool, args["element"], n))
	a.t.Logf("%s(%v) → %d chars:\n%s", tool, args["element"], n, out)
	a.answers = append(a.answers, out)
	a.read(out)
	return out
}

// read updates the agent's picture from one answer.
func (a *appAgent) read(out string) {
	snap := section(out, "Snapshot")
	whole := strings.Contains(snap, "```yaml")
	if whole {
		clear(a.shown)
		if m := counterRE.FindStringSubmatch(snap); m != nil {
			a.counter = m[1] + " " + m[2] + " left"
		}
	}
	for _, l := range strings.Split(snap, "\n") {
		if strings.Contains(l, "textbox") {
			continue // the field holds what is being typed, not an item
		}
		removed := !whole && strings.HasPrefix(l, "- ") && !strings.HasPrefix(l, "- Changes")
		if m := counterRE.FindStringSubmatch(l); m != nil && !whole && strings.HasPrefix(l, "+ ") {
			a.counter = m[1] + " " + m[2] + " left"
		}
		for _, title := range a.titles {
			switch {
			case !strings.Contains(l, title):
			case removed:
				delete(a.shown, title)
			case whole || strings.HasPrefix(l, "+ ") || strings.HasPrefix(l, "~ "):
				a.shown[title] = true
			}
		}
	}
}

// ref is the ref of the element named name (a role, or any when role is
// "") on the newest line of an answer that shows it and was not removed.
func (a *appAgent) ref(role, name string) string {
	a.t.Helper()
	if role == "" {
		role = `\w+`
	}
	re := regexp.MustCompile(role + ` "` + regexp.QuoteMeta(name) + `"(?: \[[a-z]+(?:=[^\]]*)?\])*? \[ref=([a-z0-9]+)\]`)
	for i := len(a.answers) - 1; i >= 0; i-- {
		diff := strings.Contains(a.answers[i], "```diff")
		for _, l := range strings.Split(a.answers[i], "\n") {
			if diff && strings.HasPrefix(l, "- ") {
				continue // a removed line: its ref is gone
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
	}
	a.t.Fatalf("no answer so far has a ref for %s %q", role, name)
	return ""
}

// expect checks the agent's picture: which items show and the counter.
func (a *appAgent) expect(step string, shown []string, counter string) {
	a.t.Helper()
	var got []string
	for _, title := range a.titles {
		if a.shown[title] {
			got = append(got, title)
		}
	}
	if !slices.Equal(got, shown) {
		a.t.Fatalf("%s: the answers show items %q, want %q; last answer:\n%s", step, got, shown, a.answers[len(a.answers)-1])
	}
	if counter != "" && a.counter != counter {
		a.t.Fatalf("%s: the answers' counter is %q, want %q; last answer:\n%s", step, a.counter, counter, a.answers[len(a.answers)-1])
	}
}

// TestAnswersOnlyAgent: on every fixture app of testdata/apps, an agent
// that reads one navigate answer and then only the answers to its actions
// (no browser_snapshot) adds three items, ticks one, switches filters,
// checks what shows and clears the ticked one; every ref it uses comes
// from an answer. It logs the characters it read per app.
func TestAnswersOnlyAgent(t *testing.T) {
	base := mcptest.AppsServer(t)
	c, _ := inProcess(t)
	totals := map[string]int{}
	for _, app := range mcptest.Apps {
		t.Run(app, func(t *testing.T) {
			a := &appAgent{t: t, c: c, titles: []string{"buy milk", "walk dog", "read book"}, shown: map[string]bool{}}
			a.call("browser_navigate", map[string]any{"url": base + "/" + app + "/"})
			a.expect("load", nil, "0 items left")
			for i, title := range a.titles {
				a.call("browser_type", map[string]any{"element": "New todo", "target": a.ref("textbox", "New todo"), "text": title, "submit": true})
				a.expect("add "+title, a.titles[:i+1], fmt.Sprintf("%d %s left", i+1, map[bool]string{true: "item", false: "items"}[i == 0]))
			}
			a.call("browser_click", map[string]any{"element": "buy milk", "target": a.ref("checkbox", "buy milk")})
			a.expect("tick buy milk", a.titles, "2 items left")
			out := a.call("browser_click", map[string]any{"element": "Active", "target": a.ref("", "Active")})
			a.expect("filter Active", a.titles[1:], "")
			if app == "hashrouter" || app == "pushstate" {
				// A same-document navigation: what changed, and the URL.
				url := map[string]string{"hashrouter": "/hashrouter/#/active", "pushstate": "/pushstate/active"}[app]
				if !strings.Contains(out, "```diff") || strings.Contains(out, "```yaml") || !strings.Contains(section(out, "Page"), "- Page URL: "+base+url+"\n") {
					t.Fatalf("a same-document navigation is not answered as a diff with its new URL:\n%s", out)
				}
			}
			a.call("browser_click", map[string]any{"element": "Completed", "target": a.ref("", "Completed")})
			a.expect("filter Completed", a.titles[:1], "")
			milk := a.ref("checkbox", "buy milk")
			a.call("browser_click", map[string]any{"element": "Clear completed", "target": a.ref("button", "Clear completed")})
			a.expect("clear completed", nil, "2 items left")
			// The cleared item's ref is stale: it fails at once, as before.
			fails(t, c, "browser_click", map[string]any{"target": milk}, "Ref "+milk+" not found in the current page snapshot. Try capturing new snapshot.")
			a.call("browser_click", map[string]any{"element": "All", "target": a.ref("", "All")})
			a.expect("filter All", a.titles[1:], "2 items left")
			for i, out := range a.answers[1:] {
				// Nothing in the Page section changed while typing, ticking
				// or clearing: no Page section.
				if strings.HasPrefix(a.steps[i+1], "browser_type") && strings.Contains(out, "### Page") {
					t.Errorf("an answer to typing repeats the unchanged Page section:\n%s", out)
				}
				if n := utf8.RuneCountInString(out); n > 600 {
					t.Errorf("an action answer is %d chars:\n%s", n, out)
				}
			}
			totals[app] = a.chars
			t.Logf("%s: %d chars in %d answers: %s", app, a.chars, len(a.steps), strings.Join(a.steps, "; "))
		})
	}
	sum := 0
	for _, app := range mcptest.Apps {
		sum += totals[app]
		t.Logf("total %-14s %6d chars", app, totals[app])
	}
	t.Logf("total all apps   %6d chars", sum)
}
