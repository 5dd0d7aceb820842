package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// The whole-task token rows (issue 23): one scripted agent, the same on
// both servers, counts every character it reads to finish a multi-step
// task.
//
//   - app flow, on each fixture app of testdata/apps (mcptest.Apps): add
//     three items, tick one, switch the filter to Active, check what shows,
//     clear the completed ones. The agent reads each answer and remembers
//     every ref it saw (the latest wins; a ref on a removed line of a diff
//     is forgotten). When it needs a control whose ref it has not seen (on
//     upstream: every answer links a snapshot file instead of showing refs)
//     it calls browser_snapshot, as a real agent would, and that answer
//     counts. A ref that fails (stale after a re-render) costs one
//     browser_snapshot and a retry. To check what shows after the filter it
//     uses the answer to the click when that shows the list or what left it
//     (a removed list item it knows by its ref counts); otherwise it calls
//     browser_snapshot. After the last step an
//     unmeasured snapshot checks the app's end state (the two unticked
//     items shown, the ticked one gone): a step that failed, or a wrong end
//     state, fails the row on that server.
//   - find and click, on the large pages of testdata/bench: navigate, find
//     the link three quarters down the page by its name (browser_find on
//     both servers: upstream 0.0.83 has it too; browser_snapshot where a
//     server has no browser_find or its answer lacks the ref), click it.
//     The links are picked once per run from a snapshot of an unmeasured
//     process.

// flowTitles are the items the agent adds; it ticks flowTicked.
var flowTitles = []string{"buy milk", "walk the dog", "file the taxes"}

const flowTicked = "walk the dog"

// findPages are the large fixture pages of the find-and-click rows
// (invoices, a table, has links only at its top).
var findPages = []string{"article", "docs", "news", "shop"}

// Row names of the whole-task rows.
const (
	rowAppFlow      = "app flow (whole task, all apps)"
	rowAppFlowCalls = "app flow calls"
	rowAppFlowTime  = "app flow wall time"
	rowFindClick    = "find and click (whole task, all pages)"
)

func flowRowSpecs() []rowSpec {
	var rows []rowSpec
	for _, a := range mcptest.Apps {
		rows = append(rows, spec("app flow "+a, "chars", 0))
	}
	rows = append(rows, spec(rowAppFlow, "chars", 0.70), spec(rowAppFlowCalls, "count", 0), spec(rowAppFlowTime, "ms", 0))
	for _, p := range findPages {
		rows = append(rows, spec("find and click "+p, "chars", 0))
	}
	return append(rows, spec(rowFindClick, "chars", 0.70))
}

// refPairRE reads `role "name" … [ref=e5]` off a snapshot or diff line;
// refSummaryRE the `role [ref=e5] "name"` of a summarised subtree.
var (
	refPairRE    = regexp.MustCompile(`\b([a-z]+) "((?:[^"\\]|\\.)*)"[^\n"]*?\[ref=([A-Za-z0-9]+)\]`)
	refSummaryRE = regexp.MustCompile(`\b([a-z]+) \[ref=([A-Za-z0-9]+)\] "((?:[^"\\]|\\.)*)"`)
)

// refMemory is what the agent remembers: role and name → the latest ref.
type refMemory map[string]string

// listItemRE reads a list item's ref.
var listItemRE = regexp.MustCompile(`\blistitem \[ref=([A-Za-z0-9]+)\]`)

func memKey(role, name string) string { return role + "\x00" + name }

// learn remembers every ref in text, skipping removed lines of diffs, and
// which item each list item holds (its first checkbox) in items.
func (m refMemory) learn(text string, items map[string]string) {
	inDiff := false
	item := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			inDiff = strings.HasPrefix(l, "```diff")
			continue
		}
		if inDiff && strings.HasPrefix(l, "-") {
			continue
		}
		if li := listItemRE.FindStringSubmatch(l); li != nil {
			item = li[1]
		}
		for _, s := range refPairRE.FindAllStringSubmatch(l, -1) {
			m[memKey(s[1], s[2])] = s[3]
			if s[1] == "checkbox" && item != "" && items != nil {
				items[item], item = s[2], ""
			}
		}
		for _, s := range refSummaryRE.FindAllStringSubmatch(l, -1) {
			m[memKey(s[1], s[3])] = s[2]
		}
	}
}

// ref returns the remembered ref of an element of one of roles named name.
func (m refMemory) ref(name string, roles ...string) string {
	for _, r := range roles {
		if ref, ok := m[memKey(r, name)]; ok {
			return ref
		}
	}
	return ""
}

// flowAgent is one scripted agent on one server.
type flowAgent struct {
	b     *bench
	p     *proc
	mem   refMemory
	items map[string]string // listitem ref → the item it holds
	read  int
	calls int
	notes []string
}

// call runs a tool and reads its answer (its text: this agent opens no
// linked file), also when the answer is an error.
func (a *flowAgent) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	r, err := a.p.call(ctx, tool, args, a.b.cfg.callTimeout)
	a.calls++
	a.read += chars(r.Text)
	a.mem.learn(r.Text, a.items)
	return r.Text, err
}

// snapshot calls browser_snapshot (counted).
func (a *flowAgent) snapshot(ctx context.Context, why string) (string, error) {
	a.notes = append(a.notes, why)
	return a.call(ctx, "browser_snapshot", map[string]any{})
}

// act performs tool on the element of roles named name: from memory, else
// after a snapshot; a failing ref costs a snapshot and one retry.
func (a *flowAgent) act(ctx context.Context, tool, name string, roles []string, args map[string]any) (string, error) {
	ref := a.mem.ref(name, roles...)
	if ref == "" {
		if _, err := a.snapshot(ctx, "snapshot for the ref of "+name); err != nil {
			return "", err
		}
		if ref = a.mem.ref(name, roles...); ref == "" {
			return "", fmt.Errorf("no %s %q in the snapshot", strings.Join(roles, "/"), name)
		}
	}
	full := map[string]any{"element": name, "target": ref}
	for k, v := range args {
		full[k] = v
	}
	text, err := a.call(ctx, tool, full)
	if err == nil {
		return text, nil
	}
	a.notes = append(a.notes, fmt.Sprintf("%s on %s failed (%s): snapshot and retry", tool, ref, oneLine(err.Error(), 80)))
	if _, serr := a.snapshot(ctx, "snapshot after a failed ref"); serr != nil {
		return "", err
	}
	if ref = a.mem.ref(name, roles...); ref == "" {
		return "", err
	}
	full["target"] = ref
	return a.call(ctx, tool, full)
}

// listShown reads which items a whole-page snapshot shows, or ok=false
// when text is no such snapshot (it has no "New todo" textbox).
func listShown(text string) (shown map[string]bool, ok bool) {
	if !strings.Contains(text, `textbox "New todo"`) {
		return nil, false
	}
	shown = map[string]bool{}
	for _, t := range flowTitles {
		shown[t] = strings.Contains(text, `"`+t+`"`)
	}
	return shown, true
}

// filtered checks an answer to the Active filter click against the
// agent's model of the list (all three items shown before it): a whole
// page that shows the unticked items and not the ticked one, or a diff
// whose removed items (named, or a listitem whose ref the agent saw
// holding an item) and added items leave the unticked items alone. known
// is false when the answer shows neither (or removes an item the agent
// cannot name).
func (a *flowAgent) filtered(text string) (known, ok bool) {
	if shown, whole := listShown(text); whole {
		return true, activeShown(shown)
	}
	removed, added := diffLines(text)
	shown := map[string]bool{}
	for _, t := range flowTitles {
		shown[t] = true
	}
	touched := false
	for _, l := range strings.Split(removed, "\n") {
		if m := listItemRE.FindStringSubmatch(l); m != nil {
			t, ok := a.items[m[1]]
			if !ok {
				return false, false
			}
			shown[t], touched = false, true
		}
		// Named in any form: `checkbox "walk the dog"`, `listitem: walk
		// the dog`.
		for _, t := range flowTitles {
			if strings.Contains(l, t) {
				shown[t], touched = false, true
			}
		}
	}
	for _, t := range flowTitles {
		if strings.Contains(added, t) {
			shown[t], touched = true, true
		}
	}
	if !touched {
		return false, false
	}
	return true, activeShown(shown)
}

func activeShown(shown map[string]bool) bool {
	for _, t := range flowTitles {
		if shown[t] != (t != flowTicked) {
			return false
		}
	}
	return true
}

// diffLines returns the removed and the added lines of the diff fences in
// text.
func diffLines(text string) (removed, added string) {
	var rm, add strings.Builder
	inDiff := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			inDiff = strings.HasPrefix(l, "```diff")
			continue
		}
		if !inDiff {
			continue
		}
		switch {
		case strings.HasPrefix(l, "-"):
			rm.WriteString(l + "\n")
		case strings.HasPrefix(l, "+"):
			add.WriteString(l + "\n")
		}
	}
	return rm.String(), add.String()
}

// appFlow runs the flow on one app and returns the characters read.
func (b *bench) appFlow(ctx context.Context, p *proc, url string) (*flowAgent, error) {
	a := &flowAgent{b: b, p: p, mem: refMemory{}, items: map[string]string{}}
	if _, err := a.call(ctx, "browser_navigate", map[string]any{"url": url}); err != nil {
		return a, fmt.Errorf("navigate: %w", err)
	}
	for _, t := range flowTitles {
		if _, err := a.act(ctx, "browser_type", "New todo", []string{"textbox"}, map[string]any{"text": t, "submit": true}); err != nil {
			return a, fmt.Errorf("add %q: %w", t, err)
		}
	}
	if _, err := a.act(ctx, "browser_click", flowTicked, []string{"checkbox"}, nil); err != nil {
		return a, fmt.Errorf("tick %q: %w", flowTicked, err)
	}
	text, err := a.act(ctx, "browser_click", "Active", []string{"button", "link", "radio", "tab"}, nil)
	if err != nil {
		return a, fmt.Errorf("filter Active: %w", err)
	}
	known, ok := a.filtered(text)
	if !known {
		s, err := a.snapshot(ctx, "snapshot to check what the Active filter shows")
		if err != nil {
			return a, fmt.Errorf("check the filter: %w", err)
		}
		shown, whole := listShown(s)
		known, ok = whole, whole && activeShown(shown)
	}
	if !known || !ok {
		return a, fmt.Errorf("after the Active filter the agent did not see the two unticked items alone")
	}
	if _, err := a.act(ctx, "browser_click", "Clear completed", []string{"button"}, nil); err != nil {
		return a, fmt.Errorf("clear completed: %w", err)
	}
	// Unmeasured: the end state.
	r, err := p.call(ctx, "browser_snapshot", map[string]any{}, b.cfg.callTimeout)
	if err != nil {
		return a, fmt.Errorf("end check: %w", err)
	}
	shown, whole := listShown(r.Text)
	if !whole || !activeShown(shown) || strings.Contains(r.Text, `button "Clear completed"`) {
		return a, fmt.Errorf("end state wrong: %s", oneLine(r.Text, 300))
	}
	return a, nil
}

// appFlows runs the flow on every app, each in a new tab-less state (a
// navigation to the app).
// record puts one agent's run in its row: its notes, then the characters
// it read, or the failure; it reports whether the run succeeded.
func record(res *results, key string, a *flowAgent, err error) bool {
	for _, n := range a.notes {
		res.note(key, n)
	}
	if err != nil {
		res.fail(key, err)
		return false
	}
	res.add(key, float64(a.read))
	return true
}

func (b *bench) appFlows(ctx context.Context, p *proc, res *results) {
	total, calls := 0.0, 0.0
	var wall time.Duration
	failed := false
	for _, app := range mcptest.Apps {
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		a, err := b.appFlow(ctx, p, b.appsURL+"/"+app+"/")
		wall += time.Since(start)
		if !record(res, "app flow "+app, a, err) {
			failed = true
			continue
		}
		total += float64(a.read)
		calls += float64(a.calls)
	}
	if failed {
		err := errors.New("a step failed (see the app's row)")
		for _, k := range []string{rowAppFlow, rowAppFlowCalls, rowAppFlowTime} {
			res.fail(k, err)
		}
		return
	}
	res.add(rowAppFlow, total)
	res.add(rowAppFlowCalls, calls)
	res.add(rowAppFlowTime, b.ms(wall))
}

// pickLinks returns, per find page, the name of the link three quarters
// down its snapshot: the first link on a line from there on (else the
// nearest one above) whose name is at least 8 characters long and appears
// nowhere else on the page.
func pickLinks(snapshots map[string]string) map[string]string {
	out := map[string]string{}
	linkRE := regexp.MustCompile(`^\s*- link "((?:[^"\\]|\\.)*)"`)
	for page, text := range snapshots {
		lines := strings.Split(text, "\n")
		names := make([]string, len(lines))
		count := map[string]int{}
		for i, l := range lines {
			if m := linkRE.FindStringSubmatch(l); m != nil {
				names[i] = m[1]
				count[m[1]]++
			}
		}
		lower := strings.ToLower(text)
		mark := len(lines) * 3 / 4
		order := make([]int, 0, len(lines))
		for i := mark; i < len(lines); i++ {
			order = append(order, i)
		}
		for i := mark - 1; i >= 0; i-- {
			order = append(order, i)
		}
		for _, i := range order {
			n := names[i]
			if n == "" || count[n] != 1 || len(n) < 8 || strings.Contains(n, `\`) {
				continue
			}
			// Distinctive: the name is in no other line (a find for
			// it is no search through a dozen near-namesakes).
			if strings.Count(lower, strings.ToLower(n)) == 1 {
				out[page] = n
				break
			}
		}
	}
	return out
}

// findLinks picks the find-and-click links from a fresh, unmeasured
// process of the first server.
func (b *bench) findLinks(ctx context.Context, name string) (map[string]string, error) {
	p, err := b.start(ctx, name)
	if err != nil {
		return nil, err
	}
	defer b.stop(p)
	snaps := map[string]string{}
	for _, page := range findPages {
		if _, err := p.call(ctx, "browser_navigate", map[string]any{"url": b.url("/" + page + ".html")}, b.cfg.callTimeout); err != nil {
			return nil, err
		}
		r, err := p.call(ctx, "browser_snapshot", map[string]any{}, b.cfg.callTimeout)
		if err != nil {
			return nil, err
		}
		snaps[page] = r.Text
	}
	links := pickLinks(snaps)
	for _, page := range findPages {
		if links[page] == "" {
			return nil, fmt.Errorf("no link with a distinctive name on %s.html", page)
		}
	}
	return links, nil
}

// findAndClick runs the targeted task on one page.
func (b *bench) findAndClick(ctx context.Context, p *proc, page, link string) (*flowAgent, error) {
	a := &flowAgent{b: b, p: p, mem: refMemory{}}
	if _, err := a.call(ctx, "browser_navigate", map[string]any{"url": b.url("/" + page + ".html")}); err != nil {
		return a, err
	}
	if a.mem.ref(link, "link") == "" {
		if _, ok := p.tools["browser_find"]; ok {
			if _, err := a.call(ctx, "browser_find", map[string]any{"text": link}); err != nil {
				return a, err
			}
		}
	}
	_, err := a.act(ctx, "browser_click", link, []string{"link"}, nil)
	return a, err
}

// findClicks runs the targeted task on every find page.
func (b *bench) findClicks(ctx context.Context, p *proc, res *results, links map[string]string) {
	total, failed := 0.0, false
	for _, page := range findPages {
		if ctx.Err() != nil {
			return
		}
		a, err := b.findAndClick(ctx, p, page, links[page])
		if !record(res, "find and click "+page, a, err) {
			failed = true
			continue
		}
		total += float64(a.read)
	}
	if failed {
		res.fail(rowFindClick, errors.New("a page failed (see its row)"))
		return
	}
	res.add(rowFindClick, total)
}

// flowRun runs the whole-task rows on a fresh process of each server.
func (b *bench) flowRun(ctx context.Context, names []string, flow, find bool) {
	var links map[string]string
	if find && len(names) > 0 {
		var err error
		if links, err = b.findLinks(ctx, names[0]); err != nil {
			b.logf("find and click: picking the links: %v", err)
			for _, n := range names {
				b.res[n].fail(rowFindClick, err)
			}
			find = false
		} else {
			b.logf("find and click: links %v", links)
		}
	}
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		res := b.res[name]
		for _, part := range []struct {
			on  bool
			run func(*proc)
		}{
			{flow, func(p *proc) { b.appFlows(ctx, p, res) }},
			{find, func(p *proc) { b.findClicks(ctx, p, res, links) }},
		} {
			if !part.on {
				continue
			}
			b.logf("whole-task rows: %s", name)
			p, err := b.start(ctx, name)
			if err == nil {
				_, err = p.listTools(ctx, b.cfg.callTimeout)
			}
			if err != nil {
				for _, r := range flowRowSpecs() {
					res.fail(r.Key, err)
				}
				if p != nil {
					b.stop(p)
				}
				continue
			}
			part.run(p)
			b.stop(p)
		}
	}
}
