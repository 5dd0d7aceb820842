package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
)

// bench runs the scripted agent sessions and collects both servers'
// results.
type bench struct {
	cfg   options
	specs map[string]serverSpec
	res   map[string]*results
	fx    *fixtureServer
	// appsURL serves testdata/apps (the app flow).
	appsURL string
	// hostile serves the hostile pages (nil with --hostile=false).
	hostile *mcptest.Hostile
	base    string // temp dir for the servers' working directories
	runID   string
	log     io.Writer
	// browserDirs hold the browser's own executables (for memory split).
	browserDirs []string

	mu     sync.Mutex
	seq    int
	active map[*proc]bool
	mem    map[string]memSplit
	stray  map[string][]proctree.Proc
	// tmpLeft lists what each server left in its TMPDIR after exiting.
	tmpLeft map[string][]string
}

func (b *bench) ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "mcpbench: "+format+"\n", args...)
}

// start spawns a fresh server process.
func (b *bench) start(ctx context.Context, name string) (*proc, error) {
	b.mu.Lock()
	b.seq++
	marker := fmt.Sprintf("%s/%s/%d", b.runID, name, b.seq)
	b.mu.Unlock()
	p, err := startProc(ctx, b.specs[name], b.base, marker, b.cfg.dump, b.cfg.callTimeout)
	if err != nil {
		return nil, err
	}
	p.dumpNote = func() string {
		now, total := b.fx.hangStats()
		return fmt.Sprintf("fixture: %d /hang requests open (%d so far)", now, total)
	}
	b.mu.Lock()
	b.active[p] = true
	b.mu.Unlock()
	return p, nil
}

// stop closes a server and records any process that outlived it.
func (b *bench) stop(p *proc) {
	left, tmpLeft := p.close()
	if p.measured {
		if p.ShutdownDur > 0 {
			b.res[p.spec.Name].add("shutdown (stdin closed → all gone)", b.ms(p.ShutdownDur))
		} else {
			b.res[p.spec.Name].fail("shutdown (stdin closed → all gone)", fmt.Errorf("%d processes outlived the server and were killed", len(left)))
		}
	}
	b.mu.Lock()
	delete(b.active, p)
	if len(left) > 0 {
		b.stray[p.spec.Name] = append(b.stray[p.spec.Name], left...)
	}
	if len(tmpLeft) > 0 {
		b.tmpLeft[p.spec.Name] = append(b.tmpLeft[p.spec.Name], tmpLeft...)
	}
	b.mu.Unlock()
	// Let the machine settle so the next process is not measured against
	// this one's exit.
	time.Sleep(300 * time.Millisecond)
}

// stopAll closes whatever is still running (on error or interrupt).
func (b *bench) stopAll() {
	b.mu.Lock()
	var ps []*proc
	for p := range b.active {
		ps = append(ps, p)
	}
	b.mu.Unlock()
	for _, p := range ps {
		b.stop(p)
	}
}

func (b *bench) url(path string) string { return b.fx.URL + path }

// warmup starts each server once, navigates, and throws the figures away,
// so disk caches are equally warm for both before anything is measured.
func (b *bench) warmup(ctx context.Context, names []string) {
	for _, name := range names {
		p, err := b.start(ctx, name)
		if err != nil {
			b.logf("warm-up %s: %v", name, err)
			continue
		}
		if _, err := p.call(ctx, "browser_navigate", map[string]any{"url": b.url("/article.html")}, b.cfg.callTimeout); err != nil {
			b.logf("warm-up %s: %v", name, err)
		}
		b.stop(p)
	}
}

// coldRun measures spawn → initialize, the first navigate right after
// initialize, and tools/list; with full set it then runs the whole
// scripted session in the same process.
func (b *bench) coldRun(ctx context.Context, name string, full bool) {
	res := b.res[name]
	p, err := b.start(ctx, name)
	if err != nil {
		res.fail("spawn → initialize", err)
		return
	}
	p.measured = true
	defer b.stop(p)
	res.add("spawn → initialize", b.ms(p.InitDur))
	r, err := p.call(ctx, "browser_navigate", map[string]any{"url": b.url("/article.html")}, b.cfg.callTimeout)
	if err != nil {
		res.fail("first navigate, cold process", err)
		res.fail("spawn → first page", err)
	} else {
		res.add("first navigate, cold process", b.ms(r.Dur))
		res.add("spawn → first page", b.ms(p.InitDur+r.Dur))
	}
	d, err := p.listTools(ctx, b.cfg.callTimeout)
	if err != nil {
		res.fail("tools/list", err)
		return
	}
	res.add("tools/list", b.ms(d))
	if full {
		res.add("tools listed", float64(len(p.tools)))
		b.session(ctx, p, res)
	}
}

// warmRun measures the first navigate when the client lets the server
// warm up for 2 s after initialize.
func (b *bench) warmRun(ctx context.Context, name string) {
	res := b.res[name]
	p, err := b.start(ctx, name)
	if err != nil {
		res.fail("first navigate, after 2 s idle", err)
		return
	}
	p.measured = true
	defer b.stop(p)
	res.add("spawn → initialize", b.ms(p.InitDur))
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
		return
	}
	r, err := p.call(ctx, "browser_navigate", map[string]any{"url": b.url("/article.html")}, b.cfg.callTimeout)
	if err != nil {
		res.fail("first navigate, after 2 s idle", err)
		return
	}
	res.add("first navigate, after 2 s idle", b.ms(r.Dur))
}

// session is the scripted agent session on an already navigated process.
func (b *bench) session(ctx context.Context, p *proc, res *results) {
	to := b.cfg.callTimeout
	// Every page: navigate, then snapshot it a few times.
	pages := map[string]bool{}
	for _, n := range serverList(b.cfg.pages) {
		pages[n] = true
	}
	for _, pg := range fixturePages {
		if ctx.Err() != nil {
			return
		}
		if !pages[pg.Name] {
			continue
		}
		r, err := p.call(ctx, "browser_navigate", map[string]any{"url": b.url(pg.Path)}, to)
		if err != nil {
			res.fail("navigate "+pg.Name, err)
			res.fail("snapshot "+pg.Name, fmt.Errorf("navigate failed: %w", err))
			continue
		}
		res.add("navigate "+pg.Name, b.ms(r.Dur))
		// A first snapshot is of a page that changed since the last one
		// (navigate took one): a script sets an attribute a moment after
		// browser_evaluate answered (so not before the snapshot evaluate
		// itself may take), untimed. The snapshots after it are of an
		// unchanged page.
		if err := changePage(ctx, p, to); err != nil {
			res.fail("snapshot "+pg.Name, fmt.Errorf("change the page: %w", err))
			continue
		}
		for i := range b.cfg.snapshotReps {
			r, err := p.call(ctx, "browser_snapshot", map[string]any{}, to)
			if err != nil {
				res.fail("snapshot "+pg.Name, err)
				res.fail("snapshot "+pg.Name+" size", err)
				break
			}
			key := "snapshot " + pg.Name
			if i > 0 {
				key += ", repeated"
			}
			res.add(key, b.ms(r.Dur))
			res.add("snapshot "+pg.Name+" size", float64(chars(r.Observed())))
			if r.Linked != "" {
				res.note("snapshot "+pg.Name+" size", "snapshot is in a linked file; size counts response + file")
			}
		}
	}
	for _, pg := range fixturePages {
		if slices.Contains(selfChangePages, pg.Name) && ctx.Err() == nil {
			b.selfChangedSnapshot(ctx, p, res, "snapshot "+pg.Name+", after its own change", pg.Path, changeItself, "Bench tock", selfChangeDelay)
		}
	}
	for _, c := range innerChanges {
		if ctx.Err() == nil {
			b.selfChangedSnapshot(ctx, p, res, "snapshot "+c.page+", after "+c.what, "/"+c.page+".html", c.fn, c.marker, c.delay)
		}
	}
	b.formSession(ctx, p, res)
	b.spaSession(ctx, p, res)
	b.shopSession(ctx, p, res)
	b.memory(p, res)
	// After the memory sample, which stays comparable with runs before
	// these rows (a table walked again and again grows upstream's heap).
	for _, pg := range fixturePages {
		if slices.Contains(noisePages, pg.Name) && ctx.Err() == nil {
			b.noisySnapshot(ctx, p, res, pg.Name, pg.Path)
		}
	}
	b.hostileSession(ctx, p, res)
}

// openPage navigates and returns what the agent sees of the page: the
// navigate response, or a snapshot if that lacks the ref of an element
// the agent will act on (want: role, name, role, name…).
func (b *bench) openPage(ctx context.Context, p *proc, path string, want ...string) (string, error) {
	r, err := p.call(ctx, "browser_navigate", map[string]any{"url": b.url(path)}, b.cfg.callTimeout)
	if err != nil {
		return "", err
	}
	has := strings.Contains(r.Observed(), "[ref=")
	for i := 0; i+1 < len(want) && has; i += 2 {
		has = refFor(r.Observed(), want[i], want[i+1]) != ""
	}
	if has {
		return r.Observed(), nil
	}
	r, err = p.call(ctx, "browser_snapshot", map[string]any{}, b.cfg.callTimeout)
	return r.Observed(), err
}

func (b *bench) formSession(ctx context.Context, p *proc, res *results) {
	to := b.cfg.callTimeout
	snap, err := b.openPage(ctx, p, "/form.html", "button", "Add guest", "textbox", "Full name", "button", "Next")
	if err != nil {
		for _, k := range []string{"click (form)", "type (form)", "act-and-observe form"} {
			res.fail(k, fmt.Errorf("open form: %w", err))
		}
		return
	}
	more, name, next := refFor(snap, "button", "Add guest"), refFor(snap, "textbox", "Full name"), refFor(snap, "button", "Next")
	if more == "" {
		res.fail("click (form)", fmt.Errorf("no ref for button \"Add guest\" in the snapshot"))
	} else {
		for i := range b.cfg.reps {
			r, err := p.call(ctx, "browser_click", map[string]any{"element": "Add guest button", "target": more}, to)
			if err != nil {
				res.fail("click (form)", err)
				break
			}
			res.add("click (form)", b.ms(r.Dur))
			if want := fmt.Sprintf("%d guests", 3+i); i == 0 && !strings.Contains(r.Observed(), want) {
				res.note("click (form)", fmt.Sprintf("response does not show the new count (%q)", want))
			}
		}
	}
	if name == "" {
		res.fail("type (form)", fmt.Errorf("no ref for textbox \"Full name\" in the snapshot"))
	} else {
		for i := range b.cfg.reps {
			r, err := p.call(ctx, "browser_type", map[string]any{"element": "Full name textbox", "target": name, "text": fmt.Sprintf("Ada Lovelace %d", i+1)}, to)
			if err != nil {
				res.fail("type (form)", err)
				break
			}
			res.add("type (form)", b.ms(r.Dur))
		}
	}
	if next == "" {
		res.fail("act-and-observe form", fmt.Errorf("no ref for button \"Next\" in the snapshot"))
		return
	}
	b.actAndObserve(ctx, p, res, "form", next, "Next button", "Email address")
}

func (b *bench) spaSession(ctx context.Context, p *proc, res *results) {
	b.observeButton(ctx, p, res, "spa", "/spa.html", "Load orders", firstOrderID)
}

// shopSession is act-and-observe on a large page (testdata/bench/shop.html,
// ~34k characters of snapshot): one "Add to cart" click whose effect is the
// cart link's count, the common case of a small change on a big page.
func (b *bench) shopSession(ctx context.Context, p *proc, res *results) {
	b.observeButton(ctx, p, res, "shop (large page)", "/shop.html", "Add Trail Runner GTX 1 to cart", "Cart (1)")
}

// observeButton opens path, finds the ref of the button named name and
// runs actAndObserve on it, looking for marker.
func (b *bench) observeButton(ctx context.Context, p *proc, res *results, page, path, name, marker string) {
	key := "act-and-observe " + page
	snap, err := b.openPage(ctx, p, path, "button", name)
	if err != nil {
		res.fail(key, fmt.Errorf("open %s: %w", path, err))
		return
	}
	ref := refFor(snap, "button", name)
	if ref == "" {
		res.fail(key, fmt.Errorf("no ref for button %q in the snapshot", name))
		return
	}
	b.actAndObserve(ctx, p, res, page, ref, name+" button", marker)
}

// actAndObserve clicks and counts the characters an agent must read to see
// the effect (marker): the response, plus the snapshot file it links to,
// plus a follow-up browser_snapshot if the effect is still not visible.
func (b *bench) actAndObserve(ctx context.Context, p *proc, res *results, page, ref, element, marker string) {
	key := "act-and-observe " + page
	r, err := p.call(ctx, "browser_click", map[string]any{"element": element, "target": ref}, b.cfg.callTimeout)
	if err != nil {
		res.fail(key, err)
		return
	}
	n, d := chars(r.Observed()), r.Dur
	if r.Linked != "" {
		res.note(key, fmt.Sprintf("response %d chars links a snapshot file of %d chars (counted)", chars(r.Text), chars(r.Linked)))
	}
	if !strings.Contains(r.Observed(), marker) {
		s, err := p.call(ctx, "browser_snapshot", map[string]any{}, b.cfg.callTimeout)
		if err != nil {
			res.fail(key, fmt.Errorf("effect not in the click response, and the follow-up snapshot failed: %w", err))
			return
		}
		n += chars(s.Observed())
		d += s.Dur
		if strings.Contains(s.Observed(), marker) {
			res.note(key, fmt.Sprintf("effect (%q) not in the click response; a follow-up browser_snapshot was needed (counted)", marker))
		} else {
			res.note(key, fmt.Sprintf("effect (%q) not seen even after a follow-up snapshot", marker))
		}
	}
	res.add(key, float64(n))
	res.add(key+" time", b.ms(d))
}

// rowPeakRSS is the server's processes' peak resident sets over the
// session, summed: the RSS row is one sample, which lands before or after
// a collection of the driver's heap (upstream's node read 126 and 172 MiB
// in two runs of the same session); the peaks do not move with that.
const rowPeakRSS = "memory without browser, peak (RSS high-water mark)"

// memory records the resident memory of the server's process tree, split
// into browser and non-browser processes.
func (b *bench) memory(p *proc, res *results) {
	procs := proctree.Marked(p.marker)
	if len(procs) == 0 {
		for _, k := range []string{"memory without browser (RSS)", "memory browser (RSS)", "memory without browser (PSS)", "memory browser (PSS)", rowPeakRSS, "CPU without browser, whole session", "CPU browser, whole session"} {
			res.fail(k, fmt.Errorf("no processes found (needs Linux /proc)"))
		}
		return
	}
	m := classify(procs, b.browserDirs)
	b.mu.Lock()
	b.mem[p.spec.Name] = m
	b.mu.Unlock()
	res.add("memory without browser (RSS)", float64(m.NonBrowserRSSKB)/1024)
	res.add("memory browser (RSS)", float64(m.BrowserRSSKB)/1024)
	res.add("CPU without browser, whole session", float64(m.NonBrowserCPUms))
	if m.NonBrowserPeakKB > 0 {
		res.add(rowPeakRSS, float64(m.NonBrowserPeakKB)/1024)
	}
	res.add("CPU browser, whole session", float64(m.BrowserCPUms))
	if m.NonBrowserPSSKB+m.BrowserPSSKB > 0 {
		res.add("memory without browser (PSS)", float64(m.NonBrowserPSSKB)/1024)
		res.add("memory browser (PSS)", float64(m.BrowserPSSKB)/1024)
	}
	var parts, peaks, cpu []string
	for _, pr := range m.Procs {
		if !pr.Browser {
			parts = append(parts, fmt.Sprintf("%s %.0f MiB", pr.Comm, float64(pr.RSSKB)/1024))
			peaks = append(peaks, fmt.Sprintf("%s %.0f MiB", pr.Comm, float64(pr.PeakRSSKB)/1024))
			cpu = append(cpu, fmt.Sprintf("%s %d ms", pr.Comm, pr.CPUms))
		}
	}
	res.note("memory without browser (RSS)", strings.Join(parts, ", "))
	res.note(rowPeakRSS, strings.Join(peaks, ", "))
	res.note("CPU without browser, whole session", strings.Join(cpu, ", "))
	nb := 0
	for _, pr := range m.Procs {
		if pr.Browser {
			nb++
		}
	}
	res.note("memory browser (RSS)", fmt.Sprintf("%d browser processes", nb))
}

// noisePages are the fixture pages snapshotted again after noise of the
// page's own that no snapshot can show.
var noisePages = []string{"article", "table"}

// startNoise makes the page busy the way analytics and loaders keep real
// pages busy: every 50 ms its own timer adds a script and a resource hint
// to the head, stamps a data-* attribute no style sheet names on the body,
// toggles a class no style rule names on the root element (as activity and
// scroll trackers do), and adds a comment.
const startNoise = `() => { let i = 0; setInterval(() => {
  const s = document.createElement('script'); s.type = 'application/json'; s.textContent = String(++i);
  const l = document.createElement('link'); l.rel = 'preconnect'; l.href = location.origin;
  document.head.append(s, l);
  document.body.dataset.benchSeen = String(i);
  document.documentElement.classList.toggle('bench-idle', i % 2 === 0);
  document.body.append(document.createComment('beacon ' + i));
}, 50); }`

// noisySnapshot times a snapshot of a page whose own script keeps making
// changes no snapshot can show (opened, startNoise set off and the page
// snapshotted once, untimed): what a snapshot costs on a page that never
// stops running.
func (b *bench) noisySnapshot(ctx context.Context, p *proc, res *results, page, path string) {
	to, key := b.cfg.callTimeout, "snapshot "+page+", after page noise"
	if _, err := p.call(ctx, "browser_navigate", map[string]any{"url": b.url(path)}, to); err != nil {
		res.fail(key, fmt.Errorf("open %s: %w", path, err))
		return
	}
	if _, err := p.call(ctx, "browser_evaluate", map[string]any{"function": startNoise}, to); err != nil {
		res.fail(key, fmt.Errorf("start the noise: %w", err))
		return
	}
	if _, err := p.call(ctx, "browser_snapshot", map[string]any{}, to); err != nil {
		res.fail(key, err)
		return
	}
	for range b.cfg.snapshotReps {
		select {
		case <-ctx.Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
		r, err := p.call(ctx, "browser_snapshot", map[string]any{}, to)
		if err != nil {
			res.fail(key, err)
			return
		}
		res.add(key, b.ms(r.Dur))
	}
}

// selfChangePages are the fixture pages snapshotted after a change the
// page made by itself; the table is left out, its walk alone outlasting
// selfChangeDelay.
var selfChangePages = []string{"article", "frames", "form", "spa"}

// selfChangeDelay is how long after changeItself runs the page changes:
// after both servers answered it and the snapshot taken next (untimed).
const selfChangeDelay = 600 * time.Millisecond

// changeItself adds a paragraph selfChangeDelay after it runs.
var changeItself = addParagraphLater("Bench tock", selfChangeDelay)

// addParagraphLater is a browser_evaluate function that adds a paragraph
// of text to the page after d.
func addParagraphLater(text string, d time.Duration) string {
	return fmt.Sprintf("() => { setTimeout(() => { const p = document.createElement('p'); p.textContent = %q; document.body.append(p); }, %d); }", text, d.Milliseconds())
}

// innerChanges are changes a page makes by itself inside its content, as
// an app updates a list or a cell: a list item added to the article's
// first list, a cell of the table's body rewritten, a row added to the
// end of the table's body (after the table's walk: 2.5 s). what ends the
// row's name.
var innerChanges = []struct {
	page, what, fn, marker string
	delay                  time.Duration
}{
	{"article", "a change inside it", "() => { setTimeout(() => { const l = document.querySelector('article ul, article ol'); const li = document.createElement('li'); li.textContent = 'Bench item'; l.append(li); }, 600); }", "Bench item", selfChangeDelay},
	{"table", "a change inside it", "() => { setTimeout(() => { const c = document.querySelectorAll('tbody td')[1234]; c.textContent = 'Bench cell'; }, 2500); }", "Bench cell", 2500 * time.Millisecond},
	{"table", "a row added to it", "() => { setTimeout(() => { const b = document.querySelector('tbody'); const r = b.rows[0].cloneNode(true); r.cells[0].textContent = 'Bench row'; b.append(r); }, 2500); }", "Bench row", 2500 * time.Millisecond},
}

// selfChangedSnapshot times, as row key, a snapshot of a page that changed
// by itself since the server's last snapshot, as pages do when a timer
// fires or a response arrives: fn, which makes the change (showing marker)
// delay after it runs, a snapshot before it fires (untimed:
// browser_evaluate makes our server's next snapshot a whole walk whatever
// it did, as its watch cannot vouch for a script of the agent's), the
// change, then the snapshot timed. Upstream walks the changed page; ours
// knows it changed without asking (its watch told it), and walks only
// what changed where it can.
func (b *bench) selfChangedSnapshot(ctx context.Context, p *proc, res *results, key, path, fn, marker string, delay time.Duration) {
	to := b.cfg.callTimeout
	start := time.Now()
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_navigate", map[string]any{"url": b.url(path)}},
		{"browser_evaluate", map[string]any{"function": fn}},
		{"browser_snapshot", map[string]any{}},
	} {
		if step.tool == "browser_evaluate" {
			start = time.Now()
		}
		if _, err := p.call(ctx, step.tool, step.args, to); err != nil {
			res.fail(key, fmt.Errorf("%s: %w", step.tool, err))
			return
		}
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(max(time.Until(start.Add(delay+300*time.Millisecond)), 300*time.Millisecond)):
	}
	r, err := p.call(ctx, "browser_snapshot", map[string]any{}, to)
	if err != nil {
		res.fail(key, err)
		return
	}
	if !strings.Contains(r.Observed(), marker) {
		res.note(key, "the snapshot does not show the change")
	}
	res.add(key, b.ms(r.Dur))
}

// changeLater adds a paragraph at the start of the page's body 100 ms after
// it runs: a change every snapshot shows, and one no part of the page holds
// (a node added to the body elsewhere than at its end), so the next
// snapshot is a whole walk on both servers (a data-* attribute no style
// sheet names, which it used to set, is a change no snapshot can show, and
// the watch no longer counts it; a paragraph added at the end of the body,
// which it added until part walks, is a part of the page of its own).
var changeLater = fmt.Sprintf("() => { setTimeout(() => { const p = document.createElement('p'); p.textContent = %q; document.body.prepend(p); }, %d); }", "Bench tick", 100)

// changePage makes the page change after the server's last snapshot of
// it: changeLater, then a wait for it to land.
func changePage(ctx context.Context, p *proc, to time.Duration) error {
	if _, err := p.call(ctx, "browser_evaluate", map[string]any{"function": changeLater}, to); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(300 * time.Millisecond):
		return nil
	}
}
