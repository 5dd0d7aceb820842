package tools

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// snapshotDef is upstream's browser_snapshot plus this server's options; a
// call with upstream's arguments answers exactly as upstream does.
func snapshotDef() Tool {
	def := upstreamDef("browser_snapshot")
	var s map[string]any
	_ = json.Unmarshal(def.RawInputSchema, &s)
	props := s["properties"].(map[string]any)
	props["mode"] = map[string]any{"type": "string", "enum": []string{"ai", "aria", "role"}, "description": "ai (default, refs e1), aria (ax1) or role (r1) tree"}
	props["interactive"] = map[string]any{"type": "boolean", "description": "Only interactive elements"}
	props["compact"] = map[string]any{"type": "boolean", "description": "Drop unnamed structural nodes"}
	props["maxChars"] = map[string]any{"type": "number", "description": "Truncate at this many characters"}
	props["query"] = map[string]any{"type": "string", "description": "Keep lines with all these words, and ancestors"}
	props["outline"] = map[string]any{"type": "boolean", "description": "Outline: regions, headings, fields"}
	def.RawInputSchema, _ = json.Marshal(s)
	return Tool{Def: def}
}

func snapshotTools() []*Tool {
	t := snapshotDef()
	t.Cap, t.Aliases = "core", refAlias
	t.Handle = tabTool("browser_snapshot", tabOpts{}, snapshotCall)
	return []*Tool{&t}
}

type snapshotRequest struct {
	depth  int
	boxes  bool
	target string
}

func snapshotCall(c *tabCall) error {
	a := c.args
	req := snapshotRequest{depth: int(a.Number("depth", 0)), boxes: a.Bool("boxes", false), target: a.String("target", "")}
	if a.Has("depth") && req.depth < 1 {
		return fmt.Errorf("depth must be at least 1")
	}
	maxChars := int(a.Number("maxChars", 0))
	if a.Has("maxChars") && maxChars < 1 {
		return fmt.Errorf("maxChars must be at least 1")
	}
	mode := a.String("mode", "ai")
	if a.Bool("outline", false) && (mode != "ai" || a.Has("query") || a.Has("interactive") || a.Has("compact") || a.Has("maxChars") || a.Has("filename")) {
		return fmt.Errorf("outline takes no mode, query, interactive, compact, maxChars or filename: pass outline=true alone (with target for one region)")
	}
	extras := mode != "ai" || a.Has("interactive") || a.Has("compact") || a.Has("query") || a.Has("maxChars")

	var tree *snapshot.Tree
	var text string
	switch mode {
	case "ai":
		var err error
		opts := page.SnapshotOptions{Depth: req.depth, Boxes: req.boxes}
		if req.target != "" {
			el, lerr := c.locate(req.target)
			if lerr != nil {
				return lerr
			}
			text, err = el.AISnapshot(c.ctx, opts)
		} else {
			var snap *page.Snapshot
			if snap, err = c.tab.AISnapshot(c.ctx, opts); err == nil {
				text = snap.Text
				if n := snap.FramesNotLoaded; n > 0 {
					c.resp.Result("- %s not loaded yet (their server has not answered): shown as iframe without content", plural(n, "frame", "frames"))
				}
				if n := snap.FramesBusy; n > 0 {
					c.resp.Result("- %s of another site did not answer (busy with its own script): not waited for, may show as iframe without content", plural(n, "frame", "frames"))
				}
			}
		}
		if err != nil {
			return err
		}
		if a.Bool("outline", false) {
			t, err := snapshot.Parse(text)
			if err != nil {
				return err
			}
			c.resp.SetSnapshot(fmt.Sprintf("- Outline of a %d-char snapshot:\n%s", utf8.RuneCountInString(text), fence("yaml", snapshot.Outline(t, snapshot.OutlineOptions{Budget: outlineBudget}))))
			return nil
		}
		if extras {
			if tree, err = snapshot.Parse(text); err != nil {
				return err
			}
		}
	case "aria", "role":
		var err error
		if mode == "aria" {
			if tree, err = c.tab.ARIASnapshot(c.ctx); err != nil {
				return err
			}
			tree = filterTree(tree, a, req.depth)
		} else {
			if tree, err = c.tab.RoleSnapshot(c.ctx, snapshot.RoleOptions{Interactive: a.Bool("interactive", false), Compact: a.Bool("compact", false), MaxDepth: req.depth}); err != nil {
				return err
			}
			if q := a.String("query", ""); q != "" {
				tree = tree.Query(q)
			}
		}
		if req.target != "" {
			sub, err := tree.Subtree(req.target)
			if err != nil {
				return fmt.Errorf("Ref %s not found in the %s snapshot; take a new snapshot with mode %q", req.target, mode, mode)
			}
			tree = sub
		}
	}
	if tree != nil {
		if mode == "ai" {
			tree = filterTree(tree, a, 0)
		}
		if q := a.String("query", ""); q != "" && len(tree.Roots) == 0 {
			c.resp.Result("Nothing in the %s snapshot matches all of %s: use fewer words (every word must appear on one line), or browser_find with a regex", mode, clip.Quote(q))
			return nil
		}
		text = tree.Render()
		if mode != "ai" {
			text = relativeURLs(text, c.tab.URL())
		}
	}
	stats := snapshot.TextStats(text)
	if maxChars > 0 {
		var cut bool
		if text, cut = snapshot.Truncate(text, maxChars); cut {
			c.resp.Result("Snapshot truncated at %d characters: narrow it with query, interactive, compact or depth", maxChars)
		}
	}
	if extras {
		c.resp.Result("- Stats: %d lines, %d chars, %d refs, %d interactive", stats.Lines, stats.Chars, stats.Refs, stats.InteractiveRefs)
	}
	if name := a.String("filename", ""); name != "" {
		p, err := c.writeOutput(name, "page", ".yml", []byte(text))
		if err != nil {
			return err
		}
		c.resp.Result("- [Snapshot](%s)", c.env.link(p))
		return nil
	}
	c.resp.SetSnapshot(fence("yaml", text))
	return nil
}

// filterTree applies the generic filters of browser_snapshot.
func filterTree(t *snapshot.Tree, a Args, depth int) *snapshot.Tree {
	if depth > 0 {
		t = t.MaxDepth(depth)
	}
	if a.Bool("compact", false) {
		t = t.Compact()
	}
	if a.Bool("interactive", false) {
		t = t.Interactive()
	}
	if q := a.String("query", ""); q != "" {
		t = t.Query(q)
	}
	return t
}

// relativeURLs shortens same-origin link URLs in ARIA and Role snapshots
// (Chromium reports them absolute) to paths, as the AI snapshot shows them.
func relativeURLs(text, pageURL string) string {
	u, err := url.Parse(pageURL)
	if err != nil || u.Host == "" {
		return text
	}
	return strings.ReplaceAll(text, "/url: "+u.Scheme+"://"+u.Host+"/", "/url: /")
}
