package smoke

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/recording"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// Observed is what a step's page showed, recorded by --update: the URL,
// the title and the elements that appeared (chosen as browser_export_test
// chooses them).
type Observed struct {
	URL   string     `json:"url"`
	Title string     `json:"title,omitempty"`
	Has   []RoleName `json:"snapshot_has,omitempty"`
}

// observe reads the page after a step once two snapshots in a row agree
// (or ExpectTimeout passed), and what appeared since before.
func (r *runner) observe(ctx context.Context, st Step, resp, before string) *Observed {
	wait := r.o.ExpectTimeout
	if wait <= 0 {
		wait = DefaultExpectTimeout
	}
	deadline := time.Now().Add(wait)
	var last string
	for {
		snap, err := r.c.Call(ctx, "browser_snapshot", map[string]any{})
		if err != nil {
			break
		}
		if snap.Text == last || time.Now().After(deadline) {
			break
		}
		last = snap.Text
		t := time.NewTimer(pollEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
	if last == "" {
		last = resp
	}
	o := &Observed{URL: pageField(last, "URL"), Title: pageField(last, "Title")}
	var had []recording.Element
	if before != "" && st.Tool != "browser_navigate" && st.Tool != "browser_navigate_back" {
		had = treeElements(before)
	}
	for _, e := range recording.Choose(recording.Appeared(had, treeElements(last))) {
		o.Has = append(o.Has, RoleName{Role: e.Role, Name: e.Label})
	}
	return o
}

func treeElements(resp string) []recording.Element {
	t, err := snapshot.Parse(snapshotText(resp))
	if err != nil {
		return nil
	}
	return recording.Elements(t)
}

// rewrite is one line --update changes.
type rewrite struct {
	line     int // 1-based
	old, new string
}

// Update rewrites the url, title and snapshot_has expectations of sc's
// file with what res (a Run with Options.Update) observed, prints the
// changes to w as a diff and returns how many lines changed. A step's expectation written other than
// as one "key: value" line is reported and left alone.
func Update(sc *Scenario, res *Result, w io.Writer) (int, error) {
	vars := res.vars
	data, err := os.ReadFile(sc.File)
	if err != nil {
		return 0, err
	}
	lines := strings.Split(string(data), "\n")
	var changes []rewrite
	for i, st := range sc.Steps {
		if i >= len(res.Steps) || res.Steps[i].Observed == nil {
			continue
		}
		ob := res.Steps[i].Observed
		set := func(key string, old, val any) {
			l := sc.lines[fmt.Sprintf("$.steps[%d].expect.%s", i, key)]
			if l <= 0 || l > len(lines) {
				return
			}
			text := lines[l-1]
			trimmed := strings.TrimLeft(text, " ")
			if !strings.HasPrefix(trimmed, key+":") || key == "snapshot_has" && !strings.HasSuffix(strings.TrimSpace(trimmed), "]") {
				fmt.Fprintf(w, "%s:%d: step %d: expect.%s is not on one \"%s: value\" line; update it by hand\n", sc.File, l, i+1, key, key)
				return
			}
			nl := text[:len(text)-len(trimmed)] + key + ": " + recording.Flow(val)
			if nl != text {
				changes = append(changes, rewrite{line: l, old: text, new: nl})
			}
		}
		if st.Expect.URL != "" && ob.URL != "" {
			set("url", st.Expect.URL, unexpand(ob.URL, st.Expect.URL, vars))
		}
		if st.Expect.Title != "" {
			set("title", st.Expect.Title, ob.Title)
		}
		if len(st.Expect.SnapshotHas) > 0 && len(ob.Has) > 0 {
			var has []map[string]any
			for _, h := range ob.Has {
				has = append(has, map[string]any{"role": h.Role, "name": h.Name})
			}
			set("snapshot_has", st.Expect.SnapshotHas, has)
		}
	}
	if len(changes) == 0 {
		fmt.Fprintf(w, "%s: the expectations hold; nothing to update\n", sc.File)
		return 0, nil
	}
	fmt.Fprintf(w, "--- %s\n+++ %s (updated)\n", sc.File, sc.File)
	for _, c := range changes {
		fmt.Fprintf(w, "@@ line %d @@\n-%s\n+%s\n", c.line, c.old, c.new)
		lines[c.line-1] = c.new
	}
	st, err := os.Stat(sc.File)
	if err != nil {
		return 0, err
	}
	return len(changes), os.WriteFile(sc.File, []byte(strings.Join(lines, "\n")), st.Mode().Perm())
}

// unexpand writes the ${VAR}s the old value used back into an observed
// value.
func unexpand(observed, old string, vars map[string]string) string {
	var names []string
	for _, m := range varRef.FindAllStringSubmatch(old, -1) {
		names = append(names, m[1])
	}
	slices.SortFunc(names, func(a, b string) int { return len(vars[b]) - len(vars[a]) })
	for _, n := range names {
		if v := vars[n]; v != "" {
			observed = strings.ReplaceAll(observed, v, "${"+n+"}")
		}
	}
	return observed
}
