package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// rowStealth counts what the detector page (testdata/pages/detector.html,
// issue 24) caught while an agent used the common tools: lower is better.
const rowStealth = "stealth detections"

// detectorHandler serves the detector page beside the fixtures (dir is
// testdata/bench) under a CSP that lets only its own nonced scripts run.
func detectorHandler(dir string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		page, err := os.ReadFile(filepath.Join(dir, "..", "pages", "detector.html"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Security-Policy", "script-src 'nonce-n0'")
		w.Header().Set("Content-Type", "text/html")
		w.Write(page)
	}
}

// stealthRun drives the detector page on a fresh process of each server
// with the tools an agent commonly uses, the same calls on both, and
// records how many checks detected automation.
func (b *bench) stealthRun(ctx context.Context, names []string) {
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		res := b.res[name]
		b.logf("stealth detections: %s", name)
		p, err := b.start(ctx, name)
		if err == nil {
			_, err = p.listTools(ctx, b.cfg.callTimeout)
		}
		if err != nil {
			res.fail(rowStealth, err)
			if p != nil {
				b.stop(p)
			}
			continue
		}
		hits, err := b.detect(ctx, &flowAgent{b: b, p: p, mem: refMemory{}})
		b.stop(p)
		if err != nil {
			res.fail(rowStealth, err)
			continue
		}
		keys := make([]string, 0, len(hits))
		for k := range hits {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			res.note(rowStealth, k+": "+oneLine(hits[k], 100))
		}
		b.logf("stealth detections %s: %d (%s)", name, len(hits), strings.Join(keys, ", "))
		res.add(rowStealth, float64(len(hits)))
	}
}

// detect is one agent's session on the detector page; it returns the
// page's detections (check → detail).
func (b *bench) detect(ctx context.Context, a *flowAgent) (map[string]string, error) {
	if _, err := a.call(ctx, "browser_navigate", map[string]any{"url": b.url("/detector")}); err != nil {
		return nil, err
	}
	if _, err := a.snapshot(ctx, "snapshot of the detector"); err != nil {
		return nil, err
	}
	steps := []struct {
		tool, name string
		roles      []string
		args       map[string]any
	}{
		{"browser_click", "Press me", []string{"button"}, nil},
		{"browser_type", "Name", []string{"textbox"}, map[string]any{"text": "Ada"}},
		{"browser_hover", "Email", []string{"textbox"}, nil},
		{"browser_evaluate", "Press me", []string{"button"}, map[string]any{"function": "(el) => probe()"}},
	}
	for _, s := range steps {
		if _, err := a.act(ctx, s.tool, s.name, s.roles, s.args); err != nil {
			return nil, fmt.Errorf("%s %s: %w", s.tool, s.name, err)
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_take_screenshot", map[string]any{}},
		{"browser_evaluate", map[string]any{"function": "() => probe()"}},
		{"browser_tabs", map[string]any{"action": "new"}},
		{"browser_tabs", map[string]any{"action": "select", "index": 0}},
		{"browser_snapshot", map[string]any{}},
	} {
		if _, err := a.call(ctx, c.tool, c.args); err != nil {
			return nil, fmt.Errorf("%s: %w", c.tool, err)
		}
	}
	if _, ok := a.p.tools["browser_find"]; ok {
		if _, err := a.call(ctx, "browser_find", map[string]any{"text": "Hover"}); err != nil {
			return nil, err
		}
	}
	out, err := a.call(ctx, "browser_evaluate", map[string]any{"function": "() => __detector.report()"})
	if err != nil {
		return nil, err
	}
	_, rest, ok := strings.Cut(out, "### Result\n")
	if !ok {
		return nil, fmt.Errorf("no result in the detector's report: %s", oneLine(out, 200))
	}
	var s string
	if err := json.NewDecoder(strings.NewReader(rest)).Decode(&s); err != nil {
		return nil, fmt.Errorf("the detector's report: %w", err)
	}
	hits := map[string]string{}
	if err := json.Unmarshal([]byte(s), &hits); err != nil {
		return nil, fmt.Errorf("the detector's report: %w", err)
	}
	return hits, nil
}
