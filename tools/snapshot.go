package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// snapshotTimeout bounds one snapshot: pages with frames that never load or
// huge DOMs return what is there instead of hanging.
const snapshotTimeout = 10 * time.Second

// Per-tab keys for the trees behind ARIA and Role refs.
const (
	keyARIATree = "snapshot.aria"
	keyRoleTree = "snapshot.role"
	keyCDP      = "snapshot.cdp"
)

// snapshotDef is upstream's browser_snapshot plus this server's options; a
// call with upstream's arguments answers exactly as upstream does.
func snapshotDef() Tool {
	def := upstreamDef("browser_snapshot")
	var s map[string]any
	_ = json.Unmarshal(def.RawInputSchema, &s)
	props := s["properties"].(map[string]any)
	props["mode"] = map[string]any{"type": "string", "enum": []string{"ai", "aria", "role"}, "description": "ai (default): refs e1; aria: accessibility tree, refs ax1; role: role tree, refs r1"}
	props["interactive"] = map[string]any{"type": "boolean", "description": "Only interactive elements"}
	props["compact"] = map[string]any{"type": "boolean", "description": "Drop unnamed structural nodes"}
	props["maxChars"] = map[string]any{"type": "number", "description": "Truncate at this many characters"}
	props["query"] = map[string]any{"type": "string", "description": "Keep lines with all these words, and their ancestors"}
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

func snapshotDeadline(ctx context.Context) float64 {
	timeout := snapshotTimeout
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < timeout {
			timeout = max(left, 100*time.Millisecond)
		}
	}
	return float64(timeout.Milliseconds())
}

// captureSnapshot takes Playwright's AI snapshot of the tab's page and keeps
// it as the tab's last snapshot (whole-page snapshots only).
func captureSnapshot(ctx context.Context, tab *session.Tab, req snapshotRequest) (string, error) {
	timeout := snapshotDeadline(ctx)
	opts := playwright.PageAriaSnapshotOptions{Mode: playwright.AriaSnapshotModeAi, Timeout: &timeout}
	if req.depth > 0 {
		opts.Depth = playwright.Int(req.depth)
	}
	if req.boxes {
		opts.Boxes = playwright.Bool(true)
	}
	text, err := tab.Page.AriaSnapshot(opts)
	if err != nil {
		return "", err
	}
	if req.depth == 0 && !req.boxes {
		tab.SetLastSnapshot(text)
	}
	return text, nil
}

// axTree fetches Chromium's full accessibility tree of the tab's main frame.
func axTree(c *tabCall) ([]*accessibility.Node, error) {
	cdp, err := c.cdpSession()
	if err != nil {
		return nil, err
	}
	raw, err := cdp.Send("Accessibility.getFullAXTree", map[string]any{})
	if err != nil {
		return nil, fmt.Errorf("read the accessibility tree: %s", friendlyError(err))
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var res accessibility.GetFullAXTreeResult
	if err := jsonv2.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("decode the accessibility tree: %w", err)
	}
	return res.Nodes, nil
}

// cdpSession returns the tab's CDP session, opening it once.
func (c *tabCall) cdpSession() (playwright.CDPSession, error) {
	if s, ok := c.tab.Value(keyCDP).(playwright.CDPSession); ok {
		return s, nil
	}
	s, err := c.gen.Context.NewCDPSession(c.tab.Page)
	if err != nil {
		return nil, fmt.Errorf("open a CDP session: %s", friendlyError(err))
	}
	c.tab.SetValue(keyCDP, s)
	return s, nil
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
	extras := mode != "ai" || a.Has("interactive") || a.Has("compact") || a.Has("query") || a.Has("maxChars")

	var tree *snapshot.Tree
	var text string
	switch mode {
	case "ai":
		var err error
		if req.target != "" {
			loc, lerr := c.locate(req.target)
			if lerr != nil {
				return lerr
			}
			timeout := snapshotDeadline(c.ctx)
			opts := playwright.LocatorAriaSnapshotOptions{Mode: playwright.AriaSnapshotModeAi, Timeout: &timeout}
			if req.depth > 0 {
				opts.Depth = playwright.Int(req.depth)
			}
			if req.boxes {
				opts.Boxes = playwright.Bool(true)
			}
			text, err = loc.AriaSnapshot(opts)
		} else {
			text, err = captureSnapshot(c.ctx, c.tab, req)
		}
		if err != nil {
			return err
		}
		if extras {
			if tree, err = snapshot.Parse(text); err != nil {
				return err
			}
		}
	case "aria", "role":
		nodes, err := axTree(c)
		if err != nil {
			return err
		}
		if mode == "aria" {
			prev, _ := c.tab.Value(keyARIATree).(*snapshot.Tree)
			tree = snapshot.FromAXTree(nodes, snapshot.AXOptions{Previous: prev})
			c.tab.SetValue(keyARIATree, tree)
			tree = filterTree(tree, a, req.depth)
		} else {
			prev, _ := c.tab.Value(keyRoleTree).(*snapshot.Tree)
			tree = snapshot.RoleTree(nodes, snapshot.RoleOptions{Interactive: a.Bool("interactive", false), Compact: a.Bool("compact", false), MaxDepth: req.depth, Previous: prev})
			c.tab.SetValue(keyRoleTree, tree)
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
		text = tree.Render()
		if mode != "ai" {
			text = relativeURLs(text, c.tab.Page.URL())
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
		p, err := c.env.writeOutput(name, "page", ".yml", []byte(text))
		if err != nil {
			return err
		}
		c.resp.Result("- [Snapshot](%s)", relLink(p))
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
