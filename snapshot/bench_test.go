package snapshot

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

const benchRows = 1500

// tableSnapshot returns an AI snapshot of a page holding a table of rows
// orders, the way Playwright renders one. edit changes one cell, drops one
// row and appends one, for diffs.
func tableSnapshot(rows int, edit bool) string {
	var b strings.Builder
	ref := 0
	next := func() string { ref++; return "e" + strconv.Itoa(ref) }
	fmt.Fprintf(&b, "- main [ref=%s]:\n  - heading \"Orders\" [level=1] [ref=%s]\n  - table [ref=%s]:\n", next(), next(), next())
	fmt.Fprintf(&b, "    - rowgroup [ref=%s]:\n      - row \"ID Item Qty Action\" [ref=%s]:\n", next(), next())
	for _, h := range []string{"ID", "Item", "Qty", "Action"} {
		fmt.Fprintf(&b, "        - columnheader %q [ref=%s]\n", h, next())
	}
	fmt.Fprintf(&b, "    - rowgroup [ref=%s]:\n", next())
	for i := 1; i <= rows; i++ {
		row, id, item, qty, link := next(), next(), next(), next(), next()
		if edit && i == rows/2 {
			continue // removed
		}
		q := strconv.Itoa(i % 7)
		if edit && i == rows/3 {
			q = "99"
		}
		fmt.Fprintf(&b, "      - row \"%d Widget %d %s Edit\" [ref=%s]:\n", i, i, q, row)
		fmt.Fprintf(&b, "        - cell \"%d\" [ref=%s]\n        - cell \"Widget %d\" [ref=%s]\n        - cell %q [ref=%s]\n", i, id, i, item, q, qty)
		fmt.Fprintf(&b, "        - cell \"Edit\":\n          - link \"Edit\" [ref=%s] [cursor=pointer]:\n            - /url: /orders/%d\n", link, i)
	}
	if edit {
		fmt.Fprintf(&b, "      - row \"new\" [ref=e%d]:\n        - cell \"new\"\n", 100000)
	}
	b.WriteString("  - text: \"Total: 1500\"")
	return b.String()
}

func BenchmarkParseRender(b *testing.B) {
	text := tableSnapshot(benchRows, false)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		tr, err := Parse(text)
		if err != nil {
			b.Fatal(err)
		}
		if tr.Render() != text {
			b.Fatal("round trip")
		}
	}
}

func BenchmarkParse(b *testing.B) {
	text := tableSnapshot(benchRows, false)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	text := tableSnapshot(benchRows, false)
	tr, _ := Parse(text)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_ = tr.Render()
	}
}

func BenchmarkDiff(b *testing.B) {
	prev, _ := Parse(tableSnapshot(benchRows, false))
	cur, _ := Parse(tableSnapshot(benchRows, true))
	r := Diff(prev, cur, 0)
	if r.Changed != 2 || r.NewRefs != 1 || r.Removed != 7 || r.Added != 2 {
		b.Fatalf("unexpected diff %+v:\n%s", r, r.Text)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Diff(prev, cur, 8000)
	}
}

func BenchmarkDiffUnchanged(b *testing.B) {
	prev, _ := Parse(tableSnapshot(benchRows, false))
	cur, _ := Parse(tableSnapshot(benchRows, false))
	b.ReportAllocs()
	for b.Loop() {
		if !Diff(prev, cur, 0).Unchanged {
			b.Fatal("changed")
		}
	}
}

func BenchmarkQuery(b *testing.B) {
	tr, _ := Parse(tableSnapshot(benchRows, false))
	b.ReportAllocs()
	for b.Loop() {
		_ = tr.Query("widget 750")
	}
}

// tableAX returns an accessibility tree of a table of rows rows as
// getFullAXTree reports it (cells with their StaticText and inline boxes).
func tableAX(rows int) []*accessibility.Node {
	var nodes []*accessibility.Node
	id := 0
	val := func(s string) *accessibility.Value {
		return &accessibility.Value{Type: accessibility.ValueTypeString, Value: jsonv2.Value(strconv.Quote(s))}
	}
	add := func(parent *accessibility.Node, role, name string) *accessibility.Node {
		id++
		n := &accessibility.Node{NodeID: accessibility.NodeID(strconv.Itoa(id)), Role: val(role), Name: val(name), BackendDOMNodeID: cdp.BackendNodeID(id)}
		if parent != nil {
			n.ParentID = parent.NodeID
			parent.ChildIDs = append(parent.ChildIDs, n.NodeID)
		}
		nodes = append(nodes, n)
		return n
	}
	root := add(nil, "RootWebArea", "Orders")
	root.FrameID = "MAIN"
	table := add(add(root, "main", ""), "table", "")
	for i := 1; i <= rows; i++ {
		row := add(table, "row", "")
		for _, c := range []string{strconv.Itoa(i), "Widget " + strconv.Itoa(i), strconv.Itoa(i % 7)} {
			cell := add(row, "cell", c)
			add(add(cell, "StaticText", c), "InlineTextBox", c)
		}
		link := add(add(row, "cell", "Edit"), "link", "Edit")
		add(link, "StaticText", "Edit")
	}
	return nodes
}

func BenchmarkRoleTree(b *testing.B) {
	nodes := tableAX(benchRows)
	b.ReportAllocs()
	for b.Loop() {
		_ = RoleTree(nodes, RoleOptions{})
	}
}

func BenchmarkFromAXTree(b *testing.B) {
	nodes := tableAX(benchRows)
	b.ReportAllocs()
	for b.Loop() {
		_ = FromAXTree(nodes, AXOptions{Limit: MaxAXLimit})
	}
}

// BenchmarkDiffCompactRerender: the compact diff of a 1,500-row table that
// the page re-rendered whole (every ref new) with one cell changed.
func BenchmarkDiffCompactRerender(b *testing.B) {
	prev, _ := Parse(tableSnapshot(benchRows, false))
	re := regexp.MustCompile(`\[ref=e(\d+)\]`)
	cur, _ := Parse(re.ReplaceAllStringFunc(tableSnapshot(benchRows, false), func(m string) string {
		n, _ := strconv.Atoi(m[6 : len(m)-1])
		return "[ref=e" + strconv.Itoa(200000+n) + "]"
	}))
	cur.Roots[0].Children[1].Children[1].Children[benchRows/3].Children[2].Name = "99"
	r := DiffWith(prev, cur, DiffOptions{Compact: true})
	if want := "in main > row \"501 Widget 501 4 Edit\" [ref=e202511]:\n- cell \"4\"\n+ cell \"99\" [ref=e202514] [new]"; r.Text != want || len(r.Aliases) < 7500 {
		b.Fatalf("unexpected diff (%d aliases):\n%s", len(r.Aliases), r.Text)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = DiffWith(prev, cur, DiffOptions{Compact: true, Budget: 6000})
	}
}
