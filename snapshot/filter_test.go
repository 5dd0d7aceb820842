package snapshot

import (
	"errors"
	"testing"
)

func TestFiltersGolden(t *testing.T) {
	src := readFixture(t, "lab.ai.yml")
	tests := []struct {
		name, golden string
		apply        func(*Tree) (*Tree, error)
	}{
		{"interactive", "lab.ai.interactive.yml", func(t *Tree) (*Tree, error) { return t.Interactive(), nil }},
		{"compact", "lab.ai.compact.yml", func(t *Tree) (*Tree, error) { return t.Compact(), nil }},
		{"max depth 1", "lab.ai.depth1.yml", func(t *Tree) (*Tree, error) { return t.MaxDepth(1), nil }},
		{"query", "lab.ai.query-cart.yml", func(t *Tree) (*Tree, error) { return t.Query("add CART"), nil }},
		{"query url", "lab.ai.query-url.yml", func(t *Tree) (*Tree, error) { return t.Query("/url: /other"), nil }},
		{"subtree", "lab.ai.subtree-e27.yml", func(t *Tree) (*Tree, error) { return t.Subtree("e27") }},
		{"efficient", "lab.ai.efficient.yml", func(t *Tree) (*Tree, error) { return t.Compact().MaxDepth(6).Interactive(), nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustParse(t, src)
			got, err := tc.apply(tr)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, got.Render())
			if tr.Render() != src {
				t.Error("the filter changed its source tree")
			}
		})
	}
}

func TestFilters(t *testing.T) {
	const src = "- list [ref=e1]:\n" +
		"  - listitem [ref=e2]:\n" +
		"    - link \"Alpha\" [ref=e3] [cursor=pointer]:\n" +
		"      - /url: /alpha\n" +
		"    - text: first item\n" +
		"  - listitem [ref=e4]:\n" +
		"    - generic [ref=e5] [cursor=pointer]: Beta\n" +
		"    - generic [ref=e6]:\n" +
		"      - textbox \"Gamma\" [ref=e7]: typed"
	tests := []struct {
		name  string
		apply func(*Tree) *Tree
		want  string
	}{
		{"interactive keeps roles, pointer nodes and values", (*Tree).Interactive,
			"- link \"Alpha\" [ref=e3] [cursor=pointer]\n- generic [ref=e5] [cursor=pointer]: Beta\n- textbox \"Gamma\" [ref=e7]: typed"},
		{"compact lifts unnamed structural nodes", (*Tree).Compact,
			"- listitem [ref=e2]:\n  - link \"Alpha\" [ref=e3] [cursor=pointer]:\n    - /url: /alpha\n  - text: first item\n- listitem [ref=e4]:\n  - generic [ref=e5] [cursor=pointer]: Beta\n  - textbox \"Gamma\" [ref=e7]: typed"},
		{"max depth 0 keeps all", func(t *Tree) *Tree { return t.MaxDepth(0) }, src},
		{"max depth 1", func(t *Tree) *Tree { return t.MaxDepth(1) },
			"- list [ref=e1]:\n  - listitem [ref=e2]\n  - listitem [ref=e4]"},
		{"query text with ancestors", func(t *Tree) *Tree { return t.Query("FIRST") },
			"- list [ref=e1]:\n  - listitem [ref=e2]:\n    - text: first item"},
		{"query all words", func(t *Tree) *Tree { return t.Query("gamma typed") },
			"- list [ref=e1]:\n  - listitem [ref=e4]:\n    - generic [ref=e6]:\n      - textbox \"Gamma\" [ref=e7]: typed"},
		{"query a ref", func(t *Tree) *Tree { return t.Query("ref=e5]") },
			"- list [ref=e1]:\n  - listitem [ref=e4]:\n    - generic [ref=e5] [cursor=pointer]: Beta"},
		{"query a property keeps its element", func(t *Tree) *Tree { return t.Query("/alpha") },
			"- list [ref=e1]:\n  - listitem [ref=e2]:\n    - link \"Alpha\" [ref=e3] [cursor=pointer]:\n      - /url: /alpha"},
		{"query nothing matches", func(t *Tree) *Tree { return t.Query("zeta") }, ""},
		{"empty query keeps all", func(t *Tree) *Tree { return t.Query("  ") }, src},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustParse(t, src)
			if got := tc.apply(tr).Render(); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if tr.Render() != src {
				t.Error("the filter changed its source tree")
			}
		})
	}
}

func TestSubtree(t *testing.T) {
	tr := mustParse(t, readFixture(t, "brief.ai.yml"))
	sub, err := tr.Subtree("e8")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sub.Render(), "- iframe [ref=e8]:\n  - button \"In frame\" [ref=f1e2]"; got != want {
		t.Errorf("Subtree(e8):\n%s\nwant:\n%s", got, want)
	}
	if _, err := tr.Subtree("e404"); !errors.Is(err, ErrUnknownRef) {
		t.Errorf("Subtree(e404) err = %v, want ErrUnknownRef", err)
	}
}

func TestFiltersKeepRefMaps(t *testing.T) {
	tr := RoleTree(axFixture(t, "lab.ax.json"), RoleOptions{})
	q := tr.Query("add to cart")
	if got := q.Stats().Refs; got != 2 {
		t.Fatalf("query kept %d refs, want 2:\n%s", got, q.Render())
	}
	for _, ref := range []string{"r7", "r8"} {
		if _, ok := q.RoleRef(ref); !ok {
			t.Errorf("RoleRef(%s) lost by Query", ref)
		}
		if _, ok := q.Backend(ref); !ok {
			t.Errorf("Backend(%s) lost by Query", ref)
		}
	}
}
