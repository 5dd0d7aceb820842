package snapshot

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The todo app of testdata/apps/keyed as Playwright snapshots it.
const compactBase = `- generic [ref=e2]:
  - banner [ref=e3]:
    - heading "todos" [level=1] [ref=e4]
    - textbox "New todo" [ref=e5]:
      - /placeholder: What needs to be done?
  - main [ref=e11]:
    - list "Todo list" [ref=e12]:
      - listitem [ref=e13]:
        - generic [ref=e14]:
          - checkbox "buy milk" [ref=e15]
          - text: buy milk
      - listitem [ref=e16]:
        - generic [ref=e17]:
          - checkbox "walk dog" [ref=e18]
          - text: walk dog
  - contentinfo [ref=e6]:
    - generic [ref=e30]:
      - strong [ref=e31]: "2"
      - text: items left
    - navigation "Filter" [ref=e7]:
      - link "All" [ref=e8] [cursor=pointer]:
        - /url: "#/"
      - link "Active" [ref=e9] [cursor=pointer]:
        - /url: "#/active"`

func compactDiff(t *testing.T, prev, cur string) DiffResult {
	t.Helper()
	p, err := Parse(prev)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(cur)
	if err != nil {
		t.Fatal(err)
	}
	return DiffWith(p, c, DiffOptions{Compact: true})
}

// rerender gives every ref of the list's items a new number, as a page
// that replaced them with equal nodes does.
func rerender(s string) string {
	for _, r := range []string{"13", "14", "15", "16", "17", "18"} {
		s = strings.Replace(s, "[ref=e"+r+"]", "[ref=e"+r+"0]", 1)
	}
	return s
}

func TestCompactDiff(t *testing.T) {
	tests := []struct {
		name string
		cur  string
		want string
	}{
		{name: "a state: one line under one path line",
			cur:  strings.Replace(compactBase, `checkbox "buy milk" [ref=e15]`, `checkbox "buy milk" [checked] [ref=e15]`, 1),
			want: "in main > list \"Todo list\" [ref=e12]:\n~ checkbox \"buy milk\" [checked] [ref=e15]"},
		{name: "a state added",
			cur:  strings.Replace(compactBase, `"All" [ref=e8]`, `"All" [disabled] [ref=e8]`, 1),
			want: "in navigation \"Filter\" [ref=e7]:\n~ link \"All\" [disabled] [ref=e8] [cursor=pointer]"},
		{name: "an added item: one summary line with its control's ref",
			cur: strings.Replace(compactBase, "          - text: walk dog\n", "          - text: walk dog\n"+
				"      - listitem [ref=e40]:\n        - generic [ref=e41]:\n          - checkbox \"read book\" [ref=e42]\n          - text: read book\n", 1),
			want: "in main > list \"Todo list\" [ref=e12]:\n+ listitem [ref=e40] [new]: checkbox \"read book\" [ref=e42]"},
		{name: "a removed item: its text, no ref",
			cur:  strings.Replace(compactBase, "      - listitem [ref=e13]:\n        - generic [ref=e14]:\n          - checkbox \"buy milk\" [ref=e15]\n          - text: buy milk\n", "", 1),
			want: "in main > list \"Todo list\" [ref=e12]:\n- listitem: buy milk"},
		{name: "a counter in a strong and a text: one text line",
			cur:  strings.Replace(strings.Replace(compactBase, `"2"`, `"1"`, 1), "text: items left", "text: item left", 1),
			want: "in contentinfo:\n- text: 2 items left\n+ text: 1 item left"},
		{name: "a changed link keeps its /url unprinted",
			cur:  strings.Replace(compactBase, `link "Active" [ref=e9]`, `link "Active (2)" [ref=e9]`, 1),
			want: "in navigation \"Filter\" [ref=e7]:\n- link \"Active\" [cursor=pointer]\n+ link \"Active (2)\" [ref=e9] [cursor=pointer]"},
		{name: "a re-render with equal nodes: no change",
			cur: rerender(compactBase)},
		{name: "a re-render that ticked one: only that",
			cur:  strings.Replace(rerender(compactBase), `checkbox "walk dog" [ref=e180]`, `checkbox "walk dog" [checked] [ref=e180]`, 1),
			want: "in main > list \"Todo list\" [ref=e12]:\n~ checkbox \"walk dog\" [checked] [ref=e180]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := compactDiff(t, compactBase, tc.cur)
			if d.Text != tc.want || d.Unchanged != (tc.want == "") {
				t.Fatalf("diff (unchanged %v):\n%s\nwant:\n%s", d.Unchanged, d.Text, tc.want)
			}
			// Every ref shown is on the new page.
			cur, _ := Parse(tc.cur)
			for _, l := range strings.Split(d.Text, "\n") {
				for _, m := range refInLine.FindAllStringSubmatch(l, -1) {
					if _, ok := cur.Find(m[1]); !ok {
						t.Errorf("ref %s of %q is not on the page", m[1], l)
					}
				}
			}
		})
	}
}

func TestCompactDiffStateLost(t *testing.T) {
	prev := strings.Replace(compactBase, `"All" [ref=e8]`, `"All" [disabled] [ref=e8]`, 1)
	d := compactDiff(t, prev, compactBase)
	if want := "in navigation \"Filter\" [ref=e7]:\n~ link \"All\" [ref=e8] [cursor=pointer] (was [disabled])"; d.Text != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", d.Text, want)
	}
}

func TestCompactDiffAliases(t *testing.T) {
	d := compactDiff(t, compactBase, rerender(compactBase))
	if !d.Unchanged {
		t.Fatalf("a re-render with equal nodes changed:\n%s", d.Text)
	}
	for _, r := range []string{"13", "14", "15", "16", "17", "18"} {
		if got := d.Aliases["e"+r]; got != "e"+r+"0" {
			t.Errorf("alias of e%s = %q, want e%s0", r, got, r)
		}
	}
	if len(d.Aliases) != 6 {
		t.Errorf("aliases %v: only the replaced refs", d.Aliases)
	}
}

// TestCompactDiffSummaryBudget: a large added subtree is one line, cut at
// compactSummary characters, naming the ref that holds the rest.
func TestCompactDiffSummaryBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("- main [ref=e1]:\n  - list \"Results\" [ref=e2]:\n")
	for i := range 40 {
		b.WriteString("    - listitem [ref=e" + itoa(100+2*i) + "]:\n      - link \"Result number " + itoa(i) + "\" [ref=e" + itoa(101+2*i) + "]:\n        - /url: /r/" + itoa(i) + "\n")
	}
	d := compactDiff(t, "- main [ref=e1]", strings.TrimSuffix(b.String(), "\n"))
	lines := strings.Split(d.Text, "\n")
	if len(lines) != 2 || lines[0] != "in main:" || !strings.HasPrefix(lines[1], `+ list "Results" [ref=e2] [new]: 40 items — link "Result number 0" [ref=e101], `) ||
		!strings.HasSuffix(lines[1], " more: browser_snapshot target=e2") || len(lines[1]) > compactSummary+120 || strings.Contains(d.Text, "/url") {
		t.Fatalf("summary of 40 new items:\n%s", d.Text)
	}
}

var refInLine = regexp.MustCompile(`\[ref=(e\d+)\]`)

func itoa(i int) string { return strconv.Itoa(i) }

// TestCompactDiffManyAddedSiblings: 25 rows loaded into a list that was
// there (empty) print the first maxAddedShown, then one line counting the
// rest and pointing at the list.
func TestCompactDiffManyAddedSiblings(t *testing.T) {
	var b strings.Builder
	b.WriteString("- main [ref=e1]:\n  - list \"Orders\" [ref=e2]:\n")
	for i := range 25 {
		b.WriteString("    - listitem [ref=e" + itoa(100+2*i) + "]:\n      - link \"ORD-" + itoa(1000+i) + "\" [ref=e" + itoa(101+2*i) + "]\n")
	}
	d := compactDiff(t, "- main [ref=e1]:\n  - list \"Orders\" [ref=e2]", strings.TrimSuffix(b.String(), "\n"))
	lines := strings.Split(d.Text, "\n")
	if len(lines) != 2+maxAddedShown || !strings.Contains(lines[1], `link "ORD-1000" [ref=e101]`) ||
		lines[len(lines)-1] != "+ … 20 more added: browser_snapshot target=e2" {
		t.Fatalf("25 rows added to a list:\n%s", d.Text)
	}
	if d.Added < 50 {
		t.Errorf("Added = %d: the counted rows are changes too", d.Added)
	}
}
