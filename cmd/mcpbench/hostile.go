package main

import (
	"context"
	"fmt"
	"regexp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// Hostile rows (issue 16 "no page stalls a call", issue 12 busy page): the
// pages of mcptest.Hostile, served beside the fixtures. A call that ends in
// a tool error or runs into --hostile-timeout still counts its time (how
// long the agent waited), with the error in a note.
const (
	rowStalledNavigate = "stalled frames: navigate"
	rowStalledSnapshot = "stalled frames: snapshot"
	rowStalledRepeat   = "stalled frames: snapshot, repeated"
	rowStalledClick    = "stalled frames: click"
	rowBusyNavigate    = "busy page (after load): navigate"
	rowBusySnapshot    = "busy page (after load): snapshot"
	rowBusyBeforeLoad  = "busy page (before load): navigate"
)

// hostileGoalMs are issue 16's goals for these rows in absolute time
// (the goal column): the ratio compares with upstream, the goal is what the
// call may cost.
var hostileGoalMs = map[string]float64{
	rowStalledNavigate: 1500,
	rowStalledSnapshot: 500,
	rowStalledRepeat:   500,
	rowStalledClick:    500,
	rowBusySnapshot:    5000,
}

// hostileGoals are the goals a time cannot say, printed as notes.
var hostileGoals = map[string]string{
	rowBusyNavigate:   "goal: answers within the navigation timeout",
	rowBusySnapshot:   "goal: \"not responding\"",
	rowBusyBeforeLoad: "goal: answers within the navigation timeout, \"not responding\"",
}

func hostileRowSpecs() []rowSpec {
	var rows []rowSpec
	for _, k := range []string{rowStalledNavigate, rowStalledSnapshot, rowStalledRepeat, rowStalledClick, rowBusyNavigate, rowBusySnapshot, rowBusyBeforeLoad} {
		rows = append(rows, rowSpec{Key: k, Unit: "ms", GoalMs: hostileGoalMs[k]})
	}
	return rows
}

var pressMe = regexp.MustCompile(`button "Press me" \[ref=(\w+)\]`)

// hostileSession runs the hostile pages on a server that finished the
// scripted session: a page with two iframes whose server never answers
// (navigate, snapshot ×snapshotReps, click), then a page whose main thread
// is busy after load (navigate, snapshot) and one busy before load
// (navigate). Stalled-frame rows come first: a busy page may leave a
// server unusable.
func (b *bench) hostileSession(ctx context.Context, p *proc, res *results) {
	h := b.hostile
	if h == nil {
		return
	}
	to := min(b.cfg.callTimeout, b.cfg.hostileTimeout)
	timed := func(key, tool string, args map[string]any) callResult {
		r, err := p.call(ctx, tool, args, to)
		if r.Dur > 0 {
			res.add(key, b.ms(r.Dur))
		}
		if err != nil {
			res.note(key, oneLine(err.Error(), 160))
		}
		if g := hostileGoals[key]; g != "" && p.spec.Name == serverOurs {
			res.note(key, g)
		}
		return r
	}
	timed(rowStalledNavigate, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostileSilentFrames})
	// The first snapshot is of a page changed since the server's last
	// (changePage, untimed); the next ones of the same page.
	if err := changePage(ctx, p, to); err != nil {
		res.note(rowStalledSnapshot, "change the page: "+oneLine(err.Error(), 120))
	}
	var snap string
	for i := range b.cfg.snapshotReps {
		if ctx.Err() != nil {
			return
		}
		key := rowStalledSnapshot
		if i > 0 {
			key = rowStalledRepeat
		}
		if r := timed(key, "browser_snapshot", map[string]any{}); snap == "" {
			snap = r.Observed()
		}
	}
	if m := pressMe.FindStringSubmatch(snap); m != nil {
		timed(rowStalledClick, "browser_click", map[string]any{"element": "Press me button", "target": m[1]})
	} else {
		res.fail(rowStalledClick, fmt.Errorf("no ref for button \"Press me\" in the snapshot"))
	}
	if ctx.Err() != nil {
		return
	}
	timed(rowBusyNavigate, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostileBusyAfterLoad})
	timed(rowBusySnapshot, "browser_snapshot", map[string]any{})
	timed(rowBusyBeforeLoad, "browser_navigate", map[string]any{"url": h.URL + mcptest.HostileBusyBeforeLoad})
}
