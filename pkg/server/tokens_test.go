package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// benchPages serves testdata/bench: the long, realistic pages of the
// agent-task benchmark (news, docs, shop, invoices).
func benchPages(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir("../../testdata/bench")))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// section returns the text of one ### section of a response.
func section(text, name string) string {
	i := strings.Index(text, "### "+name+"\n")
	if i < 0 {
		return ""
	}
	rest := text[i+len(name)+5:]
	if j := strings.Index(rest, "\n### "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

var lineRefRE = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

// lineRef returns the ref on the first line that contains what.
func lineRef(t *testing.T, text, what string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, what) {
			if m := lineRefRE.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no ref for %q in:\n%s", what, text)
	return ""
}

// TestNavigationEconomy checks the default (outline) snapshot mode: a large
// page comes back as a bounded outline whose refs work, a small one whole,
// navigate's find answers with the matching elements, and actions keep
// their diffs.
func TestNavigationEconomy(t *testing.T) {
	c, _ := inProcess(t)
	base := benchPages(t)

	t.Run("large page: outline with working refs", func(t *testing.T) {
		nav := must(t, c, "browser_navigate", map[string]any{"url": base + "/news.html"}, "- Page Title: Tram line vote splits riverside neighbours")
		snap := section(nav, "Snapshot")
		full := snapshotBody(t, c.MustCall(t, "browser_snapshot", nil))
		if len(full) < 20000 {
			t.Fatalf("news snapshot is only %d chars: the fixture is not long", len(full))
		}
		// Navigating costs about what upstream's answer (a file link)
		// costs: the regions with their refs, and the ways to see more.
		if n := len([]rune(snap)); n > 350 {
			t.Errorf("navigate's Snapshot section is %d chars, want ≤ 350:\n%s", n, snap)
		}
		for _, want := range []string{"- Outline (", "banner [ref=", "main [ref=", "contentinfo [ref=", "browser_find", "target=<ref>", "outline=true"} {
			if !strings.Contains(snap, want) {
				t.Errorf("outline lacks %q:\n%s", want, snap)
			}
		}
		// A region ref of the outline gives just that region.
		m := regexp.MustCompile(`\bmain \[ref=(\w+)\]`).FindStringSubmatch(snap)
		if m == nil {
			t.Fatalf("no main region in the outline:\n%s", snap)
		}
		mref := m[1]
		if main := snapshotBody(t, c.MustCall(t, "browser_snapshot", map[string]any{"target": mref})); !strings.HasPrefix(main, "- main") || strings.Contains(main, `navigation "Sections"`) {
			t.Errorf("region snapshot of %s:\n%.600s", mref, main)
		}
		// outline=true: regions with their counts, the h1, fields.
		out := must(t, c, "browser_snapshot", map[string]any{"outline": true}, "Outline of a")
		if n := len([]rune(section(out, "Snapshot"))); n > 1700 {
			t.Errorf("outline=true is %d chars, want ≤ 1700:\n%s", n, out)
		}
		for _, want := range []string{`heading "Tram line vote splits riverside neighbours" [level=1]`, `navigation "Sections"`, "links", `textbox "Email address"`} {
			if !strings.Contains(out, want) {
				t.Errorf("outline=true lacks %q:\n%s", want, out)
			}
		}
		// Its refs are the page's: act on the email field.
		must(t, c, "browser_type", map[string]any{"target": lineRef(t, out, `textbox "Email address"`), "text": "ada@example.com", "submit": true}, "Thanks, check your inbox")
		nref := lineRef(t, out, `navigation "Sections"`)
		region := snapshotBody(t, c.MustCall(t, "browser_snapshot", map[string]any{"target": nref}))
		if !strings.HasPrefix(region, `- navigation "Sections"`) || strings.Contains(region, "Tram line vote") || !strings.Contains(region, `link "Climate Podcasts"`) {
			t.Errorf("region snapshot of %s:\n%.600s", nref, region)
		}
		// The hint is given once per tab; the next outline is the line alone.
		again := section(must(t, c, "browser_navigate", map[string]any{"url": base + "/docs.html"}, "- Outline ("), "Snapshot")
		if strings.Contains(again, "browser_find") {
			t.Errorf("the second outline repeats the hint:\n%s", again)
		}
		fails(t, c, "browser_snapshot", map[string]any{"outline": true, "query": "x"}, "outline takes no")
	})

	t.Run("small page: whole snapshot", func(t *testing.T) {
		nav := c.MustCall(t, "browser_navigate", map[string]any{"url": base + "/widget.html"})
		body := snapshotBody(t, nav)
		if strings.Contains(nav, "Outline of") || body != snapshotBody(t, c.MustCall(t, "browser_snapshot", nil)) {
			t.Errorf("a small page did not come back whole:\n%s", nav)
		}
	})

	t.Run("navigate with find, then click a navigating link", func(t *testing.T) {
		nav := must(t, c, "browser_navigate", map[string]any{"url": base + "/news.html", "find": "riverside tram extension"}, "Matches (page:")
		if strings.Contains(nav, "Outline of") || len(nav) > 1500 {
			t.Errorf("navigate with find answered %d chars:\n%s", len(nav), nav)
		}
		ref := lineRef(t, nav, `link "Council approves riverside tram extension`)
		if !strings.Contains(nav, `— in main > region "More from City"`) {
			t.Errorf("match lacks its context:\n%s", nav)
		}
		out := must(t, c, "browser_click", map[string]any{"target": ref}, "- Page Title: How a City Learned to Cross Its River", "- Outline (")
		if n := len([]rune(section(out, "Snapshot"))); n > 2000 {
			t.Errorf("click that navigated carried %d chars of snapshot", n)
		}
		must(t, c, "browser_navigate", map[string]any{"url": base + "/news.html", "find": "no such words here"}, "No element matches", "fewer words")
	})

	t.Run("browser_find ranks exact names and gives context", func(t *testing.T) {
		c.MustCall(t, "browser_navigate", map[string]any{"url": base + "/docs.html"})
		out := must(t, c, "browser_find", map[string]any{"text": "verifying signatures"})
		lines := strings.Split(snapshotBody(t, out), "\n")
		if !strings.HasPrefix(lines[0], `- link "Verifying signatures"`) || !strings.Contains(lines[0], `— in complementary "On this page"`) {
			t.Errorf("first match is not the exact-named link:\n%s", out)
		}
		if !strings.Contains(out, `heading "Verifying signatures" [level=2]`) {
			t.Errorf("the heading is missing:\n%s", out)
		}
		if len(out) > 2500 {
			t.Errorf("find answered %d chars", len(out))
		}
		rx := must(t, c, "browser_find", map[string]any{"regex": "/^- cell \"x-hook-(id|event)\"/i"})
		if n := strings.Count(snapshotBody(t, rx), "\n") + 1; n != 2 {
			t.Errorf("regex found %d cells, want 2:\n%s", n, rx)
		}
	})

	t.Run("table value by find", func(t *testing.T) {
		c.MustCall(t, "browser_navigate", map[string]any{"url": base + "/invoices.html"})
		out := must(t, c, "browser_find", map[string]any{"text": "INV-20417"}, `cell "INV-20417"`, "— row: INV-20417 | Birch & Vale | 2024-02-22 | €8,523.27 | Overdue")
		if len(out) > 1500 {
			t.Errorf("find answered %d chars:\n%s", len(out), out)
		}
	})

	t.Run("actions keep their diff", func(t *testing.T) {
		nav := c.MustCall(t, "browser_navigate", map[string]any{"url": base + "/shop.html", "find": "Add Trail Runner GTX 1 to cart"})
		out := must(t, c, "browser_click", map[string]any{"target": lineRef(t, nav, `button "Add Trail Runner GTX 1 to cart"`)}, "Cart (1)", "Added to cart")
		if len(out) > 1500 {
			t.Errorf("click answered %d chars:\n%s", len(out), out)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		c.MustCall(t, "browser_navigate", map[string]any{"url": base + "/docs.html"})
		huge := strings.Repeat("a", 1<<20)
		cases := []struct {
			name string
			tool string
			args map[string]any
			want string
		}{
			{"find empty text", "browser_find", map[string]any{"text": ""}, "text is empty"},
			{"find blank text", "browser_find", map[string]any{"text": "   "}, "text is empty"},
			{"find 1 MB text", "browser_find", map[string]any{"text": huge}, "1048576 characters long (at most 1000)"},
			{"find bad regex", "browser_find", map[string]any{"regex": "/(unclosed/"}, "invalid regex"},
			{"find bad flag", "browser_find", map[string]any{"regex": "/x/q"}, `unsupported regex flag "q"`},
			{"find both", "browser_find", map[string]any{"text": "a", "regex": "a"}, "exactly one of text or regex"},
			{"navigate empty find", "browser_navigate", map[string]any{"url": base + "/docs.html", "find": ""}, "find is empty"},
			{"snapshot unknown region", "browser_snapshot", map[string]any{"target": "e99999"}, "new snapshot"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				res := c.Call(t, tc.tool, tc.args)
				text := mcptest.Text(res)
				if !res.IsError || !strings.Contains(text, tc.want) {
					t.Fatalf("want an error with %q, got isError=%v:\n%.400s", tc.want, res.IsError, text)
				}
				if len(text) > 400 {
					t.Errorf("error is %d chars long:\n%.400s", len(text), text)
				}
			})
		}
		must(t, c, "browser_find", map[string]any{"text": "zebra crossing"}, `No matches for "zebra crossing"`, "fewer or shorter words")
		must(t, c, "browser_snapshot", map[string]any{"query": "zebra crossing"}, `Nothing in the ai snapshot matches all of "zebra crossing"`, "fewer words")
		// A region ref from a page that is gone.
		nav := c.MustCall(t, "browser_navigate", map[string]any{"url": base + "/news.html"})
		old := lineRef(t, section(nav, "Snapshot"), "banner [ref=")
		c.MustCall(t, "browser_navigate", map[string]any{"url": base + "/shop.html"})
		fails(t, c, "browser_snapshot", map[string]any{"target": old}, "new snapshot")
	})
}

// snapshotLinkRE is upstream's Snapshot section in its full mode: one link
// to a page-{timestamp}.yml file.
var snapshotLinkRE = regexp.MustCompile(`^- \[Snapshot\]\([^)]*page-[0-9T-]+Z\.yml\)$`)

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSnapshotModeFlag checks --snapshot-mode none, full and inline.
func TestSnapshotModeFlag(t *testing.T) {
	base := benchPages(t)
	for _, tc := range []struct {
		mode  string
		check func(t *testing.T, nav, full string)
	}{
		{"none", func(t *testing.T, nav, _ string) {
			if strings.Contains(nav, "### Snapshot") {
				t.Errorf("mode none carried a snapshot:\n%.500s", nav)
			}
		}},
		{"full", func(t *testing.T, nav, full string) {
			// As upstream 0.0.83: the snapshot goes to a file, the
			// answer links it.
			if strings.Contains(nav, "```yaml") || !snapshotLinkRE.MatchString(strings.TrimSpace(section(nav, "Snapshot"))) {
				t.Fatalf("mode full: navigate did not link a snapshot file:\n%.800s", nav)
			}
			if got := readFile(t, linkedFile(t, section(nav, "Snapshot"))); got != full {
				t.Errorf("mode full: the linked file is not the whole snapshot (%d chars, want %d)", len(got), len(full))
			}
		}},
		{"inline", func(t *testing.T, nav, full string) {
			body := snapshotBody(t, nav)
			whole := body == full
			cut := strings.Contains(nav, "Snapshot cut at 40000 characters") && strings.HasPrefix(full, strings.TrimSuffix(body, "\n"+snapshot.TruncationMarker))
			if strings.Contains(nav, "Outline of") || !(whole || cut) || len(body) < min(len(full), 30000) {
				t.Errorf("mode inline did not carry the snapshot up to 40,000 chars (got %d of %d)", len(body), len(full))
			}
		}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			c, _ := inProcess(t, "--snapshot-mode", tc.mode)
			nav := must(t, c, "browser_navigate", map[string]any{"url": base + "/news.html"}, "- Page Title: Tram line vote")
			full := snapshotBody(t, c.MustCall(t, "browser_snapshot", nil))
			tc.check(t, nav, full)
			out := c.MustCall(t, "browser_click", map[string]any{"target": lineRef(t, full, `button "Save article"`)})
			switch tc.mode {
			case "none":
				if strings.Contains(out, "### Snapshot") {
					t.Errorf("mode none: click carried a snapshot:\n%s", out)
				}
			case "full":
				sec := strings.TrimSpace(section(out, "Snapshot"))
				if !snapshotLinkRE.MatchString(sec) || len(out) > 1000 {
					t.Fatalf("mode full: click did not link a snapshot file (%d chars):\n%.800s", len(out), out)
				}
				if got := readFile(t, linkedFile(t, sec)); !strings.Contains(got, `button "Saved"`) || len(got) < len(full)/2 {
					t.Errorf("mode full: the click's file is not the whole page after it (%d chars)", len(got))
				}
			case "inline":
				if !strings.Contains(out, `button "Saved"`) || len(out) > 2000 {
					t.Errorf("mode inline: click should carry a small diff (%d chars):\n%.800s", len(out), out)
				}
			}
		})
	}
}
