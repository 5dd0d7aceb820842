package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// rowSpec is one line of the table. Goal is the largest ratio ours/upstream
// that passes; zero means the row is for information only.
type rowSpec struct {
	Key  string
	Unit string
	Goal float64
	// GoalMs, if set, is a goal on our time itself (not the ratio).
	GoalMs float64
}

// rowSpecs lists the rows in print order; the goals are issue 8's, and
// issue 16's where it set new ones (snapshots, click, type), issue 28's for
// spawn → first page.
func rowSpecs() []rowSpec {
	rows := []rowSpec{
		spec("spawn → initialize", "ms", 0.10),
		spec("tools/list", "ms", 0),
		spec("tools listed", "count", 0),
		spec("first navigate, cold process", "ms", 1.0),
		// What an agent waits from starting the server to its first page
		// (issue 28's goal).
		spec("spawn → first page", "ms", 0.60),
		spec("first navigate, after 2 s idle", "ms", 0.25),
	}
	for _, p := range fixturePages {
		rows = append(rows, spec("navigate "+p.Name, "ms", 0))
	}
	for _, p := range fixturePages {
		rows = append(rows, spec("snapshot "+p.Name, "ms", 0.8))
	}
	for _, p := range fixturePages {
		if slices.Contains(selfChangePages, p.Name) {
			rows = append(rows, spec("snapshot "+p.Name+", after its own change", "ms", 0.8))
		}
	}
	for _, c := range innerChanges {
		rows = append(rows, spec("snapshot "+c.page+", after "+c.what, "ms", 0.8))
	}
	for _, p := range fixturePages {
		rows = append(rows, spec("snapshot "+p.Name+", repeated", "ms", 0.2))
	}
	for _, n := range noisePages {
		rows = append(rows, spec("snapshot "+n+", after page noise", "ms", 0.2))
	}
	for _, p := range fixturePages {
		rows = append(rows, spec("snapshot "+p.Name+" size", "chars", 0))
	}
	rows = append(rows,
		spec("click (form)", "ms", 0.15),
		spec("type (form)", "ms", 0.8),
		spec("act-and-observe form", "chars", 0.30),
		spec("act-and-observe spa", "chars", 0.30),
		spec("act-and-observe shop (large page)", "chars", 0.05),
		spec("act-and-observe form time", "ms", 0),
		spec("act-and-observe spa time", "ms", 0),
		spec("act-and-observe shop (large page) time", "ms", 0),
		spec(rowStealth, "count", 0),
		spec("memory without browser (RSS)", "MiB", 0.75),
		spec("memory browser (RSS)", "MiB", 0),
		spec("memory without browser (PSS)", "MiB", 0),
		spec(rowPeakRSS, "MiB", 0),
		spec("memory browser (PSS)", "MiB", 0),
		spec("CPU without browser, whole session", "ms", 0),
		spec("CPU browser, whole session", "ms", 0),
		spec("shutdown (stdin closed → all gone)", "ms", 0),
	)
	rows = append(rows, hostileRowSpecs()...)
	rows = append(rows, agentRowSpecs()...)
	return append(rows, flowRowSpecs()...)
}

// results collects one server's samples per row.
type results struct {
	mu      sync.Mutex
	samples map[string][]float64
	errs    map[string]string
	notes   map[string][]string
}

func newResults() *results {
	return &results{samples: map[string][]float64{}, errs: map[string]string{}, notes: map[string][]string{}}
}

func (r *results) add(key string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples[key] = append(r.samples[key], v)
}

// fail records why a row has no value; the first reason wins.
func (r *results) fail(key string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.errs[key]; !ok {
		r.errs[key] = err.Error()
	}
}

func (r *results) note(key, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.notes[key] {
		if n == s {
			return
		}
	}
	r.notes[key] = append(r.notes[key], s)
}

// median returns the median of xs (mean of the middle two for an even
// count) and false for an empty slice.
func median(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// measure is one server's figure for a row.
type measure struct {
	Median  *float64  `json:"median,omitempty"`
	Samples []float64 `json:"samples,omitempty"`
	Error   string    `json:"error,omitempty"`
	Notes   []string  `json:"notes,omitempty"`
}

// row is a computed table line.
type row struct {
	Name     string   `json:"name"`
	Unit     string   `json:"unit"`
	Ours     measure  `json:"ours"`
	Upstream measure  `json:"upstream"`
	Ratio    *float64 `json:"ratio,omitempty"`
	Goal     float64  `json:"goal,omitempty"`
	GoalMs   float64  `json:"goal_ms,omitempty"`
	// Status is pass, miss, info (no goal) or n/a (a side has no value).
	Status string `json:"status"`
}

func (r *results) measure(key string) measure {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := measure{Samples: r.samples[key], Error: r.errs[key], Notes: r.notes[key]}
	if v, ok := median(m.Samples); ok {
		m.Median = &v
		m.Error = ""
	}
	return m
}

// buildRows computes the table from both servers' results.
func buildRows(specs []rowSpec, ours, upstream *results) []row {
	var rows []row
	for _, s := range specs {
		r := row{Name: s.Key, Unit: s.Unit, Goal: s.Goal, GoalMs: s.GoalMs, Ours: ours.measure(s.Key), Upstream: upstream.measure(s.Key)}
		r.Ratio = ratio(r.Ours.Median, r.Upstream.Median)
		r.Status = status(r.Ratio, s.Goal)
		if s.GoalMs > 0 {
			r.Status = absStatus(r.Ours.Median, s.GoalMs)
		}
		rows = append(rows, r)
	}
	return rows
}

func ratio(a, b *float64) *float64 {
	if a == nil || b == nil || *b == 0 {
		return nil
	}
	v := *a / *b
	return &v
}

func status(ratio *float64, goal float64) string {
	switch {
	case ratio == nil:
		return "n/a"
	case goal == 0:
		return "info"
	case *ratio <= goal:
		return "pass"
	default:
		return "miss"
	}
}

// absStatus is status for a goal on our own time.
func absStatus(ours *float64, goalMs float64) string {
	switch {
	case ours == nil:
		return "n/a"
	case *ours <= goalMs:
		return "pass"
	default:
		return "miss"
	}
}

// formatValue renders a median in its unit: milliseconds and MiB with a
// precision that suits their size, counts as integers.
func formatValue(m measure, unit string) string {
	if m.Median == nil {
		return "n/a"
	}
	v := *m.Median
	switch unit {
	case "ms", "MiB":
		if math.Abs(v) >= 100 {
			return fmt.Sprintf("%.0f %s", v, unit)
		}
		return fmt.Sprintf("%.1f %s", v, unit)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

func formatRatio(r *float64) string {
	if r == nil {
		return "n/a"
	}
	if *r < 0.1 {
		return fmt.Sprintf("%.3f", *r)
	}
	return fmt.Sprintf("%.2f", *r)
}

func formatGoal(g, ms float64) string {
	if ms > 0 {
		return fmt.Sprintf("≤%g s", ms/1000)
	}
	if g == 0 {
		return "-"
	}
	return fmt.Sprintf("≤%.2f", g)
}

// printTable writes the rows as an aligned text table (names left, figures
// right), then the reasons a side has no value and any notes.
func printTable(w io.Writer, rows []row) error {
	cells := [][]string{{"row", "ours", "upstream", "ratio", "goal", "result"}}
	for _, r := range rows {
		cells = append(cells, []string{r.Name, formatValue(r.Ours, r.Unit), formatValue(r.Upstream, r.Unit),
			formatRatio(r.Ratio), formatGoal(r.Goal, r.GoalMs), r.Status})
	}
	if _, err := io.WriteString(w, alignTable(cells)); err != nil {
		return err
	}
	var notes []string
	for _, r := range rows {
		for _, side := range []struct {
			name string
			m    measure
		}{{"ours", r.Ours}, {"upstream", r.Upstream}} {
			if side.m.Error != "" {
				notes = append(notes, fmt.Sprintf("  %s, %s: %s", r.Name, side.name, oneLine(side.m.Error, 200)))
			}
			for _, n := range side.m.Notes {
				notes = append(notes, fmt.Sprintf("  %s, %s: %s", r.Name, side.name, oneLine(n, 200)))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "notes:")
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	return nil
}

// alignTable pads cells into columns separated by " | ": the first column
// left-aligned, the others right-aligned, with a rule under the header.
func alignTable(cells [][]string) string {
	if len(cells) == 0 {
		return ""
	}
	width := make([]int, len(cells[0]))
	for _, r := range cells {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for ri, r := range cells {
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString(" | ")
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		b.WriteByte('\n')
		if ri == 0 {
			for i, n := range width {
				if i > 0 {
					b.WriteString("-|-")
				}
				b.WriteString(strings.Repeat("-", n))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n]) + "…"
	}
	return s
}

// spec is a row with a goal on the ratio (0: none).
// measuredRows drops the rows neither server has a figure or an error for
// (the parts --only left out).
func measuredRows(rows []row) []row {
	var out []row
	for _, r := range rows {
		if r.Ours.Median != nil || r.Upstream.Median != nil || r.Ours.Error != "" || r.Upstream.Error != "" {
			out = append(out, r)
		}
	}
	return out
}

func spec(key, unit string, goal float64) rowSpec {
	return rowSpec{Key: key, Unit: unit, Goal: goal}
}
