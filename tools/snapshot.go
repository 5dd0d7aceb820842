package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// snapshotTimeout bounds one snapshot: pages with frames that never load or
// huge DOMs return what is there instead of hanging.
const snapshotTimeout = 10 * time.Second

func snapshotTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_snapshot"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_snapshot", tabOpts{}, snapshotCall)},
	}
}

type snapshotRequest struct {
	depth  int
	boxes  bool
	target string
}

// captureSnapshot takes Playwright's AI snapshot of the tab's page and keeps
// it as the tab's last snapshot (whole-page snapshots only).
func captureSnapshot(ctx context.Context, tab *session.Tab, req snapshotRequest) (string, error) {
	mode := playwright.AriaSnapshotModeAi
	timeout := float64(snapshotTimeout.Milliseconds())
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < snapshotTimeout {
			timeout = float64(max(left, 100*time.Millisecond).Milliseconds())
		}
	}
	opts := playwright.PageAriaSnapshotOptions{Mode: mode, Timeout: &timeout}
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

func snapshotCall(c *tabCall) error {
	req := snapshotRequest{depth: int(c.args.Number("depth", 0)), boxes: c.args.Bool("boxes", false)}
	if c.args.Has("depth") && req.depth < 1 {
		return fmt.Errorf("depth must be at least 1")
	}
	var text string
	var err error
	if target := c.args.String("target", ""); target != "" {
		loc, lerr := c.locate(target)
		if lerr != nil {
			return lerr
		}
		mode := playwright.AriaSnapshotModeAi
		opts := playwright.LocatorAriaSnapshotOptions{Mode: mode, Timeout: playwright.Float(float64(snapshotTimeout.Milliseconds()))}
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
	c.resp.SetSnapshot(fence("yaml", text))
	return nil
}
