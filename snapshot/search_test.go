package snapshot

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const searchPage = `- navigation "Main" [ref=e1]:
  - link "Pricing plans" [ref=e2] [cursor=pointer]:
    - /url: /pricing-plans
- main [ref=e3]:
  - heading "Pricing" [level=1] [ref=e4]
  - paragraph [ref=e5]: Our pricing is simple.
  - link "Pricing" [ref=e6] [cursor=pointer]:
    - /url: /pricing
  - table "Invoices" [ref=e7]:
    - row "INV-1 Acme €10.00 Paid" [ref=e8]:
      - cell "INV-1" [ref=e9]
      - cell "€10.00" [ref=e10]
    - row "INV-2 Birch €20.00 Open" [ref=e11]:
      - cell "INV-2" [ref=e12]`

func TestSearch(t *testing.T) {
	tree, err := Parse(searchPage)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		m     Matcher
		first string // ref of the first match
		refs  []string
		total int
	}{
		{"exact interactive name first", TextMatcher("pricing"), "e6", []string{"e6", "e4", "e2", "e5"}, 4},
		{"case and spaces ignored", TextMatcher("  PRICING  "[2:9]), "e6", nil, 4},
		{"row then its exact cell", TextMatcher("INV-1"), "e9", []string{"e9", "e8"}, 2},
		{"url matches", TextMatcher("/pricing-plans"), "e2", []string{"e2"}, 1},
		{"regex on the line", RegexMatcher{regexp.MustCompile(`cell "INV-\d"`)}, "e9", []string{"e9", "e12"}, 2},
		{"nothing", TextMatcher("refund"), "", nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Search(tree, tc.m, SearchOptions{})
			if r.Total != tc.total {
				t.Fatalf("total %d, want %d: %+v", r.Total, tc.total, r.Matches)
			}
			if tc.first != "" && r.Matches[0].Node.Ref != tc.first {
				t.Errorf("first match %s, want %s", r.Matches[0].Node.Ref, tc.first)
			}
			if tc.refs != nil {
				var got []string
				for _, m := range r.Matches {
					got = append(got, m.Node.Ref)
				}
				if strings.Join(got, ",") != strings.Join(tc.refs, ",") {
					t.Errorf("order %v, want %v", got, tc.refs)
				}
			}
		})
	}
}

func TestSearchBoundsAndContext(t *testing.T) {
	var b strings.Builder
	b.WriteString("- main [ref=e1]:\n  - list [ref=e2]:\n")
	for i := 0; i < 100; i++ {
		b.WriteString("    - listitem [ref=e" + string(rune('a'+i%26)) + "]: apple\n")
	}
	tree, _ := Parse(b.String())
	r := Search(tree, TextMatcher("apple"), SearchOptions{Max: 5})
	if len(r.Matches) != 5 || r.Total != 100 {
		t.Fatalf("got %d of %d", len(r.Matches), r.Total)
	}
	out := RenderMatches(r, 0)
	if !strings.Contains(out, "95 more matches not shown: refine the search") {
		t.Errorf("no note of the rest:\n%s", out)
	}
	tree, _ = Parse(searchPage)
	out = RenderMatches(Search(tree, TextMatcher("INV-2"), SearchOptions{}), 0)
	want := `- cell "INV-2" [ref=e12] — in main > table "Invoices" > row "INV-2 Birch €20.00 Open" [ref=e11]`
	if !strings.HasPrefix(out, want) {
		t.Errorf("context:\n%s\nwant prefix:\n%s", out, want)
	}
	out = RenderMatches(Search(tree, TextMatcher("pricing"), SearchOptions{}), 60)
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "3 more matches") {
		t.Errorf("budget 100:\n%s", out)
	}
}

func TestSearchUnnamedRowShowsCells(t *testing.T) {
	tree, _ := Parse(`- table [ref=e1]:
  - row [ref=e2]:
    - cell "INV-7" [ref=e3]
    - cell "Acme" [ref=e4]
    - cell "€8.00" [ref=e5]`)
	out := RenderMatches(Search(tree, TextMatcher("inv-7"), SearchOptions{}), 0)
	if out != `- cell "INV-7" [ref=e3] — row: INV-7 | Acme | €8.00 — in table [ref=e1]` {
		t.Errorf("got %q", out)
	}
}

func TestSearchDropsLabelsAndRepeats(t *testing.T) {
	tree, _ := Parse(`- form "Filters" [ref=e1]:
  - generic [ref=e2]:
    - text: Maximum price
    - spinbutton "Maximum price" [ref=e3]
  - spinbutton "Minimum price" [ref=e4]`)
	out := RenderMatches(Search(tree, TextMatcher("price"), SearchOptions{}), 0)
	want := `- spinbutton "Maximum price" [ref=e3] — in form "Filters" [ref=e1]
- spinbutton "Minimum price" [ref=e4]`
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// TestSearchDemotesEqualMatches: forty status cells named "Overdue" rank
// above the button "Show overdue only" (an exact name), but after two of
// them the button is listed, and the cells still count in Total.
func TestSearchDemotesEqualMatches(t *testing.T) {
	var b strings.Builder
	b.WriteString("- main [ref=e1]:\n  - button \"Show all\" [ref=e2]\n  - table [ref=e3]:\n")
	ref := 10
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "    - row \"INV-%d Overdue\" [ref=e%d]:\n      - cell \"INV-%d\" [ref=e%d]\n      - cell \"Overdue\" [ref=e%d]\n", i, ref, i, ref+1, ref+2)
		ref += 3
	}
	b.WriteString("  - button \"Show overdue only\" [ref=e4]\n")
	tree, err := Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	res := Search(tree, TextMatcher("overdue"), SearchOptions{Max: 5})
	var refs []string
	for _, m := range res.Matches {
		refs = append(refs, m.Node.Ref)
	}
	if !slices.Contains(refs, "e4") {
		t.Errorf("the button is not among the first 5 matches: %v", refs)
	}
	if res.Total < 41 {
		t.Errorf("Total = %d, want every match counted", res.Total)
	}
}
