package snapshot

import (
	"fmt"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	const base = "- main [ref=e1]:\n" +
		"  - button \"Save\" [ref=e2]\n" +
		"  - list [ref=e3]:\n" +
		"    - listitem [ref=e4]: One\n" +
		"    - listitem [ref=e5]: Two\n" +
		"  - text: hello\n" +
		"  - text: hello\n" +
		"  - paragraph: Note"
	tests := []struct {
		name      string
		prev, cur string
		budget    int
		want      string
		counts    [4]int // added, removed, changed, new refs
		unchanged bool
		truncated bool
	}{
		{name: "identical", prev: base, cur: base, unchanged: true},
		{name: "empty to empty", unchanged: true},
		{name: "first snapshot", prev: "", cur: "- main [ref=e1]:\n  - button \"Go\" [ref=e2]\n  - text: hi",
			want:   "+ - main [ref=e1] [new]:\n+   - button \"Go\" [ref=e2] [new]\n+   - text: hi",
			counts: [4]int{3, 0, 0, 2}},
		{name: "page emptied", prev: base, cur: "",
			want:   "- - main [ref=e1] (+7 lines inside)",
			counts: [4]int{0, 8, 0, 0}},
		{name: "attribute changed", prev: base,
			cur:    strings.Replace(base, `"Save" [ref=e2]`, `"Save" [disabled] [ref=e2]`, 1),
			want:   "  - main [ref=e1]:\n-   - button \"Save\" [ref=e2]\n+   - button \"Save\" [disabled] [ref=e2]",
			counts: [4]int{0, 0, 1, 0}},
		{name: "inline text changed", prev: base,
			cur:    strings.Replace(base, "Two", "Deux", 1),
			want:   "  - main [ref=e1]:\n    - list [ref=e3]:\n-     - listitem [ref=e5]: Two\n+     - listitem [ref=e5]: Deux",
			counts: [4]int{0, 0, 1, 0}},
		{name: "ref-less line matched by role and rank", prev: base,
			cur:    strings.Replace(base, "paragraph: Note", "paragraph: Remark", 1),
			want:   "  - main [ref=e1]:\n-   - paragraph: Note\n+   - paragraph: Remark",
			counts: [4]int{0, 0, 1, 0}},
		{name: "text line replaced", prev: "- main [ref=e1]:\n  - text: old\n  - button [ref=e2]",
			cur:    "- main [ref=e1]:\n  - text: new\n  - button [ref=e2]",
			want:   "  - main [ref=e1]:\n-   - text: old\n+   - text: new",
			counts: [4]int{1, 1, 0, 0}},
		{name: "one of two equal texts removed", prev: base,
			cur:    strings.Replace(base, "  - text: hello\n  - text: hello\n", "  - text: hello\n", 1),
			want:   "  - main [ref=e1]:\n-   - text: hello",
			counts: [4]int{0, 1, 0, 0}},
		{name: "subtree removed", prev: base,
			cur:    "- main [ref=e1]:\n  - button \"Save\" [ref=e2]\n  - text: hello\n  - text: hello\n  - paragraph: Note",
			want:   "  - main [ref=e1]:\n-   - list [ref=e3] (+2 lines inside)",
			counts: [4]int{0, 3, 0, 0}},
		{name: "subtree added", prev: base,
			cur:    base + "\n  - dialog \"Confirm\" [ref=e9]:\n    - link \"Why\" [ref=e10]:\n      - /url: /why\n    - text: Sure?",
			want:   "  - main [ref=e1]:\n+   - dialog \"Confirm\" [ref=e9] [new]:\n+     - link \"Why\" [ref=e10] [new]:\n+       - /url: /why\n+     - text: Sure?",
			counts: [4]int{4, 0, 0, 2}},
		{name: "url changed", prev: "- link \"A\" [ref=e1]:\n  - /url: /a", cur: "- link \"A\" [ref=e1]:\n  - /url: /b",
			want:   "- - link \"A\" [ref=e1]:\n-   - /url: /a\n+ - link \"A\" [ref=e1]:\n+   - /url: /b",
			counts: [4]int{0, 0, 1, 0}},
		{name: "element moved into a new container", prev: base,
			cur:    "- main [ref=e1]:\n  - group [ref=e8]:\n    - button \"Save\" [ref=e2]\n  - list [ref=e3]:\n    - listitem [ref=e4]: One\n    - listitem [ref=e5]: Two\n  - text: hello\n  - text: hello\n  - paragraph: Note",
			want:   "  - main [ref=e1]:\n+   - group [ref=e8] [new]:\n+     - button \"Save\" [ref=e2]",
			counts: [4]int{2, 0, 0, 1}},
		{name: "equal keys matched by rank", prev: "- list:\n  - listitem: a\n  - listitem: b\n  - listitem: c",
			cur:    "- list:\n  - listitem: a\n  - listitem: b\n  - listitem: C",
			want:   "  - list:\n-   - listitem: c\n+   - listitem: C",
			counts: [4]int{0, 0, 1, 0}},
		{name: "removed line keeps its place", prev: base,
			cur:    strings.Replace(base, "    - listitem [ref=e4]: One\n", "", 1),
			want:   "  - main [ref=e1]:\n    - list [ref=e3]:\n-     - listitem [ref=e4]: One",
			counts: [4]int{0, 1, 0, 0}},
		{name: "budget cuts on a line", prev: "", cur: "- a [ref=e1]\n- b [ref=e2]\n- c [ref=e3]", budget: 41,
			want:      "+ - a [ref=e1] [new]\n+ - b [ref=e2] [new]\n[...DIFF TRUNCATED - 1 line (21 chars) not shown]",
			counts:    [4]int{3, 0, 0, 3},
			truncated: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev, cur := mustParse(t, tc.prev), mustParse(t, tc.cur)
			r := Diff(prev, cur, tc.budget)
			if r.Text != tc.want {
				t.Errorf("Text:\n%s\nwant:\n%s", r.Text, tc.want)
			}
			if got := [4]int{r.Added, r.Removed, r.Changed, r.NewRefs}; got != tc.counts {
				t.Errorf("added, removed, changed, new = %v, want %v", got, tc.counts)
			}
			if r.Unchanged != tc.unchanged || r.Truncated != tc.truncated {
				t.Errorf("Unchanged=%v Truncated=%v, want %v %v", r.Unchanged, r.Truncated, tc.unchanged, tc.truncated)
			}
		})
	}
}

func TestDiffNil(t *testing.T) {
	cur := mustParse(t, "- button [ref=e1]")
	if r := Diff(nil, cur, 0); r.Text != "+ - button [ref=e1] [new]" {
		t.Errorf("Diff(nil, cur) = %q", r.Text)
	}
	if r := Diff(cur, nil, 0); r.Text != "- - button [ref=e1]" {
		t.Errorf("Diff(prev, nil) = %q", r.Text)
	}
	if r := Diff(nil, nil, 0); !r.Unchanged {
		t.Errorf("Diff(nil, nil) = %+v", r)
	}
}

func TestDiffGolden(t *testing.T) {
	t.Run("ai", func(t *testing.T) {
		prev := mustParse(t, readFixture(t, "lab.ai.yml"))
		cur := mustParse(t, readFixture(t, "lab.after.ai.yml"))
		golden(t, "lab.diff.txt", Diff(prev, cur, 0).Text)
	})
	// ARIA and Role trees built with Previous keep their refs, so their
	// diffs hold only what changed.
	t.Run("aria", func(t *testing.T) {
		prev := FromAXTree(axFixture(t, "lab.ax.json"), AXOptions{})
		cur := FromAXTree(axFixture(t, "lab.after.ax.json"), AXOptions{Previous: prev})
		golden(t, "lab.aria.diff.txt", Diff(prev, cur, 0).Text)
	})
	t.Run("role", func(t *testing.T) {
		prev := RoleTree(axFixture(t, "lab.ax.json"), RoleOptions{Compact: true})
		cur := RoleTree(axFixture(t, "lab.after.ax.json"), RoleOptions{Compact: true, Previous: prev})
		golden(t, "lab.role.diff.txt", Diff(prev, cur, 0).Text)
	})
}

// TestDiffRoleIdentity checks that Role trees are matched by what their refs
// stand for: a button inserted first renumbers every ref, yet only that
// button is new and the other lines show as changed refs.
func TestDiffRoleIdentity(t *testing.T) {
	page := func(extra bool) *Tree {
		kids := []string{"3", "4"}
		parts := []string{
			axNode("3", "button", "Save", nil, ""),
			axNode("4", "link", "Help", nil, ""),
		}
		if extra {
			kids = append([]string{"2"}, kids...)
			parts = append(parts, axNode("2", "button", "New", nil, ""))
		}
		parts = append(parts, axNode("1", "RootWebArea", "", kids, `"frameId":"F"`))
		return RoleTree(axJSON(t, "["+strings.Join(parts, ",")+"]"), RoleOptions{})
	}
	r := Diff(page(false), page(true), 0)
	want := "+ - button \"New\" [ref=r1] [new]\n" +
		"- - button \"Save\" [ref=r1]\n+ - button \"Save\" [ref=r2]\n" +
		"- - link \"Help\" [ref=r2]\n+ - link \"Help\" [ref=r3]"
	if r.Text != want || r.NewRefs != 1 || r.Changed != 2 {
		t.Errorf("Diff:\n%s\nwant:\n%s\n%+v", r.Text, want, r)
	}
}

func TestDiffWithCollapse(t *testing.T) {
	prev, _ := Parse("- main [ref=e1]:\n  - status [ref=e2]: none")
	var b strings.Builder
	b.WriteString("- main [ref=e1]:\n  - status [ref=e2]: 10 loaded\n  - list [ref=e3]:\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "    - listitem [ref=e%d]:\n      - button \"Open %d\" [ref=e%d]\n", 10+2*i, i, 11+2*i)
	}
	cur, _ := Parse(strings.TrimRight(b.String(), "\n"))
	full := Diff(prev, cur, 0)
	got := DiffWith(prev, cur, DiffOptions{Collapse: 2, RootNewOnly: true})
	want := `  - main [ref=e1]:
-   - status [ref=e2]: none
+   - status [ref=e2]: 10 loaded
+   - list [ref=e3] [new]:
+     - listitem [ref=e10]:
+       - button "Open 0" [ref=e11]
+     - listitem [ref=e12]:
+       - button "Open 1" [ref=e13]
+     - … 8 more (16 lines, 16 refs): snapshot target=e3`
	if got.Text != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got.Text, want)
	}
	if got.Added != full.Added || got.NewRefs != full.NewRefs {
		t.Fatalf("counts differ from the full diff: %+v vs %+v", got, full)
	}
	// Few children: nothing collapses.
	small := DiffWith(prev, cur, DiffOptions{Collapse: 5})
	if strings.Contains(small.Text, "more (") {
		t.Fatalf("collapsed 10 children with Collapse 5:\n%s", small.Text)
	}
}
