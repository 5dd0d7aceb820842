package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// The agent-task benchmark (issue 18) counts every character a scripted
// agent reads to finish a task, with a fixed strategy per server that uses
// the cheapest way each one offers:
//
//   - upstream (@playwright/mcp): navigate (the response links the snapshot
//     file; a targeted agent does not open it), browser_find for the named
//     element, act. An exploratory agent must look at the page: it reads the
//     linked snapshot file, then acts.
//   - ours: a targeted agent navigates with find (the response lists the
//     matches instead of the outline), then acts. An exploratory agent reads
//     the navigate response (the page whole when small, else its outline);
//     if the control is not there it calls browser_find once; then acts.
//
// Every response an agent receives is counted (action responses included);
// a linked file only when the strategy opens it.

// agentTask is one task on one fixture page.
type agentTask struct {
	Name        string
	Page        string
	Exploratory bool
	// Find is what a targeted agent searches for (text); an exploratory
	// agent falls back to it when the control is not in what it read.
	Find string
	// Control matches the line of the element to act on (role and name).
	Control *regexp.Regexp
	// Tool and Args perform the action on the ref found ("target" is set).
	Tool string
	Args map[string]any
	// Want must appear in what the agent read by the end (the value it
	// was asked to read); empty for tasks that only act.
	Want string
}

func agentTasks() []agentTask {
	return []agentTask{
		{Name: "news: click a named link", Page: "/news.html", Find: "riverside tram extension",
			Control: regexp.MustCompile(`link "Council approves riverside tram extension[^"]*"`), Tool: "browser_click", Args: map[string]any{"element": "link"}},
		{Name: "shop: add a named product to the cart", Page: "/shop.html", Find: "Add Trail Runner GTX 1",
			Control: regexp.MustCompile(`button "Add Trail Runner GTX 1 to cart"`), Tool: "browser_click", Args: map[string]any{"element": "Add to cart button"}},
		{Name: "shop: fill a field by label", Page: "/shop.html", Find: "Maximum price",
			Control: regexp.MustCompile(`spinbutton "Maximum price"`), Tool: "browser_type", Args: map[string]any{"element": "Maximum price", "text": "120"}},
		{Name: "invoices: read a table row", Page: "/invoices.html", Find: "INV-20417",
			Control: regexp.MustCompile(`(row|cell) "INV-20417`), Want: "€8,523.27"},
		{Name: "docs: follow a named doc link", Page: "/docs.html", Find: "Verifying signatures",
			Control: regexp.MustCompile(`link "Verifying signatures"`), Tool: "browser_click", Args: map[string]any{"element": "link"}},

		{Name: "news: subscribe to the newsletter", Page: "/news.html", Exploratory: true, Find: "Email address",
			Control: regexp.MustCompile(`textbox "Email address"`), Tool: "browser_type", Args: map[string]any{"element": "Email address", "text": "ada@example.com"}},
		{Name: "docs: search the documentation", Page: "/docs.html", Exploratory: true, Find: "Search documentation",
			Control: regexp.MustCompile(`searchbox "Search documentation"`), Tool: "browser_type", Args: map[string]any{"element": "search", "text": "webhooks", "submit": true}},
		{Name: "shop: sort by price", Page: "/shop.html", Exploratory: true, Find: "Sort by",
			Control: regexp.MustCompile(`combobox "Sort by"`), Tool: "browser_select_option", Args: map[string]any{"element": "Sort by", "values": []any{"Price: low to high"}}},
		{Name: "invoices: show overdue invoices", Page: "/invoices.html", Exploratory: true, Find: "overdue",
			Control: regexp.MustCompile(`button "Show overdue only"`), Tool: "browser_click", Args: map[string]any{"element": "Show overdue only"}},
	}
}

// Row names of the agent-task table.
const (
	rowTargeted    = "agent tasks, targeted (5)"
	rowExploratory = "agent tasks, exploratory (4)"
)

func agentRowSpecs() []rowSpec {
	var rows []rowSpec
	for _, t := range agentTasks() {
		rows = append(rows, spec("task "+t.Name, "chars", 0))
	}
	return append(rows, spec(rowTargeted, "chars", 0.70), spec(rowExploratory, "chars", 0.30))
}

var refRE = regexp.MustCompile(`\[ref=([A-Za-z0-9]+)\]`)

// refOn finds the ref on the first line of text that control matches.
func refOn(text string, control *regexp.Regexp) string {
	for _, l := range strings.Split(text, "\n") {
		if control.MatchString(l) {
			if m := refRE.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// agentSession runs every task on a process and records the sums.
func (b *bench) agentSession(ctx context.Context, p *proc, res *results) {
	ours := p.spec.Name == serverOurs
	sums := map[bool]float64{}
	failed := map[bool]bool{}
	for _, t := range agentTasks() {
		if ctx.Err() != nil {
			return
		}
		n, err := b.agentTask(ctx, p, t, ours)
		key := "task " + t.Name
		if err != nil {
			res.fail(key, err)
			failed[t.Exploratory] = true
			continue
		}
		res.add(key, float64(n))
		sums[t.Exploratory] += float64(n)
	}
	for _, ex := range []bool{false, true} {
		key := map[bool]string{false: rowTargeted, true: rowExploratory}[ex]
		if failed[ex] {
			res.fail(key, fmt.Errorf("a task failed (see its row)"))
			continue
		}
		res.add(key, sums[ex])
	}
}

// agentTask runs one task and returns the characters the agent read.
func (b *bench) agentTask(ctx context.Context, p *proc, t agentTask, ours bool) (int, error) {
	to := b.cfg.callTimeout
	read := 0
	var seen strings.Builder
	got := func(r callResult, withFile bool) string {
		s := r.Text
		if withFile {
			s = r.Observed()
		}
		read += chars(s)
		seen.WriteString(s)
		seen.WriteByte('\n')
		return s
	}
	navArgs := map[string]any{"url": b.url(t.Page)}
	if ours && !t.Exploratory {
		navArgs["find"] = t.Find
	}
	r, err := p.call(ctx, "browser_navigate", navArgs, to)
	if err != nil {
		return 0, err
	}
	text := got(r, t.Exploratory && !ours)
	ref := refOn(text, t.Control)
	if ref == "" {
		r, err := p.call(ctx, "browser_find", map[string]any{"text": t.Find}, to)
		if err != nil {
			return 0, err
		}
		text = got(r, false)
		ref = refOn(text, t.Control)
	}
	if ref == "" {
		return read, fmt.Errorf("%s not found in what the agent read", t.Control)
	}
	if t.Tool != "" {
		args := map[string]any{"target": ref}
		for k, v := range t.Args {
			args[k] = v
		}
		r, err := p.call(ctx, t.Tool, args, to)
		if err != nil {
			return read, err
		}
		got(r, false)
	}
	if t.Want != "" && !strings.Contains(seen.String(), t.Want) {
		return read, fmt.Errorf("the agent never read %q", t.Want)
	}
	return read, nil
}

// agentRun runs the task set on a fresh process of each server, in turn.
func (b *bench) agentRun(ctx context.Context, names []string) {
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		b.logf("agent tasks: %s", name)
		res := b.res[name]
		p, err := b.start(ctx, name)
		if err == nil {
			_, err = p.listTools(ctx, b.cfg.callTimeout)
		}
		if err != nil {
			for _, r := range agentRowSpecs() {
				res.fail(r.Key, err)
			}
			if p != nil {
				b.stop(p)
			}
			continue
		}
		b.agentSession(ctx, p, res)
		b.stop(p)
	}
}
