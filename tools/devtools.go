package tools

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// devtoolsTools are upstream's --caps=devtools tools this server has: a
// Playwright trace (one at a time per browser, saved on close) and element
// highlights.
func devtoolsTools() []*Tool {
	quiet := tabOpts{noPage: true}
	return []*Tool{
		{Def: optDef("browser_start_tracing", "Start tracing", "Start trace recording (a Playwright trace with screenshots and DOM snapshots)", true, props{}),
			Cap: "devtools", Handle: tabTool("browser_start_tracing", quiet, startTracing)},
		{Def: optDef("browser_stop_tracing", "Stop tracing", "Stop trace recording and save it as a .zip the Playwright trace viewer opens", true,
			props{"filename": pStr("File name for the trace, relative to the output directory. Defaults to `trace-{timestamp}.zip`.")}),
			Cap: "devtools", Handle: tabTool("browser_stop_tracing", quiet, stopTracing)},
		{Def: optDef("browser_highlight", "Highlight element", "Show a persistent highlight overlay around the element on the page.", true,
			props{"element": elementProp, "target": targetProp, "style": pStr(`Additional inline CSS applied to the highlight overlay, e.g. "outline: 2px dashed red".`)}, "target"),
			Cap: "devtools", Aliases: refAlias, Handle: tabTool("browser_highlight", quiet, highlight)},
		{Def: optDef("browser_hide_highlight", "Hide element highlight", "Remove a highlight overlay previously added for the element, or all of them when no element is given.", true,
			props{"element": pStr("Human-readable element description used when adding the highlight; must match the value passed to browser_highlight."), "target": targetProp}),
			Cap: "devtools", Aliases: refAlias, Handle: tabTool("browser_hide_highlight", quiet, hideHighlight)},
	}
}

const keyTrace = "tools.trace"

// traceState is the trace of one browser generation.
type traceState struct {
	mu      sync.Mutex
	running bool
	started time.Time
}

var traceStateMu sync.Mutex

func traceOf(g *session.Generation) *traceState {
	traceStateMu.Lock()
	defer traceStateMu.Unlock()
	st, _ := g.Value(keyTrace).(*traceState)
	if st == nil {
		st = &traceState{}
		g.SetValue(keyTrace, st)
	}
	return st
}

func startTracing(c *tabCall) error {
	st := traceOf(c.gen)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.running {
		return fmt.Errorf("a trace is already running (started %s): stop it with browser_stop_tracing first", st.started.Format("15:04:05"))
	}
	err := c.gen.Context.Tracing().Start(playwright.TracingStartOptions{
		Screenshots: playwright.Bool(true),
		Snapshots:   playwright.Bool(true),
		Title:       playwright.String("cloakbrowser-mcp session " + c.sess.ID()),
	})
	if err != nil {
		return fmt.Errorf("start tracing: %s", friendlyError(err))
	}
	st.running, st.started = true, time.Now()
	// Closing the session or the browser saves the trace instead of losing it.
	g, env := c.gen, c.env
	g.OnDispose(keyTrace, func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if !st.running {
			return
		}
		st.running = false
		p, err := env.outputPath("", "trace", ".zip")
		if err == nil {
			err = g.Context.Tracing().Stop(p)
		}
		if err != nil {
			env.Log.Warn().Err(err).Msg("save the running trace on close")
			return
		}
		env.Log.Info().Str("path", p).Msg("saved the running trace on close")
	})
	c.resp.Result("Tracing started: screenshots and DOM snapshots of every action. Stop it with browser_stop_tracing; closing the browser saves it too.")
	return nil
}

func stopTracing(c *tabCall) error {
	st := traceOf(c.gen)
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.running {
		return fmt.Errorf("no trace is running: start one with browser_start_tracing")
	}
	name := c.args.String("filename", "")
	if name != "" && !strings.EqualFold(filepath.Ext(name), ".zip") {
		name += ".zip"
	}
	p, err := c.env.outputPath(name, "trace", ".zip")
	if err != nil {
		// Keep tracing: the agent can retry with another name.
		return err
	}
	st.running = false
	c.gen.OnDispose(keyTrace, nil)
	if err := c.gen.Context.Tracing().Stop(p); err != nil {
		return fmt.Errorf("stop tracing: %s", friendlyError(err))
	}
	c.resp.Result("- [Trace](%s) (%s of recording)", relLink(p), time.Since(st.started).Round(time.Second))
	c.resp.Result("Open it with `npx playwright show-trace %s` or at https://trace.playwright.dev", relLink(p))
	return nil
}

// highlightJS draws (or moves) a highlight box over an element: an
// aria-hidden overlay, so snapshots do not see it.
const highlightJS = `(el, [key, element, style]) => {
	const r = el.getBoundingClientRect();
	let box = Array.from(document.querySelectorAll('[data-cloakmcp-highlight]')).find(b => b.getAttribute('data-cloakmcp-highlight') === key);
	if (!box) {
		box = document.createElement('div');
		box.setAttribute('data-cloakmcp-highlight', key);
		box.setAttribute('aria-hidden', 'true');
		document.documentElement.appendChild(box);
	}
	box.setAttribute('data-cloakmcp-element', element);
	box.style.cssText = 'position:absolute;box-sizing:border-box;pointer-events:none;z-index:2147483647;' +
		'outline:2px solid #ff00ff;background:rgba(255,0,255,0.12);' +
		'left:' + (r.left + scrollX) + 'px;top:' + (r.top + scrollY) + 'px;width:' + r.width + 'px;height:' + r.height + 'px;' + style;
	return [r.left, r.top, r.width, r.height].map(Math.round);
}`

func highlight(c *tabCall) error {
	target := c.args.String("target", "")
	loc, err := c.locate(target)
	if err != nil {
		return err
	}
	style := c.args.String("style", "")
	if strings.ContainsAny(style, "<>") {
		return fmt.Errorf("style must be inline CSS declarations, e.g. \"outline: 2px dashed red\"")
	}
	v, err := loc.Evaluate(highlightJS, []any{target, c.args.String("element", ""), style})
	if err != nil {
		return fmt.Errorf("highlight %s: %s", c.describe(target), friendlyError(err))
	}
	c.resp.Result("Highlighted %s at %v", c.describe(target), v)
	return nil
}

func hideHighlight(c *tabCall) error {
	key, element := c.args.String("target", ""), c.args.String("element", "")
	n, err := c.tab.Page.Evaluate(`([key, element]) => {
		let n = 0;
		for (const b of document.querySelectorAll('[data-cloakmcp-highlight]')) {
			const all = !key && !element;
			if (all || (key && b.getAttribute('data-cloakmcp-highlight') === key) || (element && b.getAttribute('data-cloakmcp-element') === element)) {
				b.remove();
				n++;
			}
		}
		return n;
	}`, []any{key, element})
	if err != nil {
		return fmt.Errorf("hide highlight: %s", friendlyError(err))
	}
	if f, _ := toFloat(n); f == 0 {
		c.resp.Result("No highlight to remove")
		return nil
	}
	c.resp.Result("Removed %v highlight(s)", n)
	return nil
}
