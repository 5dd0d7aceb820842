package main

import (
	"strings"
	"testing"
)

// A keyed re-render as ours answers it: the tick renders every item anew,
// the filter then removes them by ref and adds the unticked ones.
const tickAnswer = "### Snapshot\n```diff\n" +
	"      - list \"Todo list\" [ref=e12]:\n" +
	"-       - listitem [ref=e22] (+3 lines inside)\n" +
	"+       - listitem [ref=e31] [new]:\n" +
	"+         - generic [ref=e32]:\n" +
	"+           - checkbox \"buy milk\" [ref=e33]\n" +
	"+       - listitem [ref=e34] [new]:\n" +
	"+           - checkbox \"walk the dog\" [checked] [ref=e36]\n" +
	"+       - listitem [ref=e37] [new]:\n" +
	"+           - checkbox \"file the taxes\" [ref=e39]\n" +
	"-     - button \"Gone\" [ref=e50]\n" +
	"+     - button \"Clear completed\" [ref=e40] [new]\n```\n"

func TestRefMemory(t *testing.T) {
	m, items := refMemory{}, map[string]string{}
	m.learn("- textbox \"New todo\" [ref=e5]\n- button \"Active\" [pressed] [ref=e9]\n- list [ref=e13] [new]: 2 items — checkbox [ref=e16] \"buy milk\" …", items)
	m.learn(tickAnswer, items)
	for name, want := range map[string]string{"New todo": "e5", "Active": "e9", "walk the dog": "e36", "Clear completed": "e40", "buy milk": "e33"} {
		if got := m.ref(name, "textbox", "button", "link", "checkbox"); got != want {
			t.Errorf("ref of %q = %q, want %q", name, got, want)
		}
	}
	if got := m.ref("Gone", "button"); got != "" {
		t.Errorf("a removed line's ref was remembered: %q", got)
	}
	if items["e34"] != "walk the dog" || items["e31"] != "buy milk" || items["e37"] != "file the taxes" {
		t.Errorf("items: %v", items)
	}
}

func TestFiltered(t *testing.T) {
	a := &flowAgent{mem: refMemory{}, items: map[string]string{}}
	a.mem.learn(tickAnswer, a.items)
	for _, tc := range []struct {
		name, text string
		known, ok  bool
	}{
		{"removed by a known ref", "```diff\n-       - listitem [ref=e34] (+3 lines inside)\n```", true, true},
		{"removed by its text", "```diff\nin main > list \"Todo list\" [ref=e12]:\n- listitem: walk the dog\nin group \"Filter\" [ref=e7]:\n- button \"Active\"\n+ button \"Active\" [pressed] [ref=e9]\n```", true, true},
		{"removed by name", "```diff\n-           - checkbox \"walk the dog\" [checked] [ref=e36]\n```", true, true},
		{"rendered anew", "```diff\n-  - listitem [ref=e31] (+3 lines inside)\n-  - listitem [ref=e34] (+3 lines inside)\n-  - listitem [ref=e37] (+3 lines inside)\n" +
			"+  - checkbox \"buy milk\" [ref=e43]\n+  - checkbox \"file the taxes\" [ref=e46]\n```", true, true},
		{"the wrong one removed", "```diff\n-  - listitem [ref=e31] (+3 lines inside)\n```", true, false},
		{"an unknown item removed", "```diff\n-  - listitem [ref=e99] (+3 lines inside)\n```", false, false},
		{"only the buttons changed", "```diff\n-  - button \"All\" [pressed] [ref=e8]\n+  - button \"All\" [ref=e8]\n```", false, false},
		{"a file link", "### Snapshot\n- [Snapshot](page.yml)", false, false},
		{"a whole page", "- textbox \"New todo\" [ref=e5]\n- checkbox \"buy milk\" [ref=e6]\n- checkbox \"file the taxes\" [ref=e7]", true, true},
		{"a whole page, all shown", "- textbox \"New todo\" [ref=e5]\n- checkbox \"buy milk\"\n- checkbox \"walk the dog\"\n- checkbox \"file the taxes\"", true, false},
	} {
		if known, ok := a.filtered(tc.text); known != tc.known || ok != tc.ok {
			t.Errorf("%s: known %v ok %v, want %v %v", tc.name, known, ok, tc.known, tc.ok)
		}
	}
}

func TestPickLinks(t *testing.T) {
	var b strings.Builder
	for i := range 20 {
		name := "Story number " + string(rune('A'+i))
		if i == 15 {
			name = "Home" // too short: the next one is picked
		}
		b.WriteString("  - link \"" + name + "\" [ref=e" + string(rune('a'+i)) + "]\n")
	}
	b.WriteString("  - link \"Story number A\" [ref=ez]\n") // A is not unique
	page := b.String()
	if got := pickLinks(map[string]string{"news": page}); got["news"] != "Story number Q" {
		t.Errorf("picked %q, want the first unique long name from three quarters down", got["news"])
	}
	// A name that is also in other text is no distinctive target.
	if !strings.Contains(page, `link "Story number B" [ref=eb]`) {
		t.Fatal("fixture changed")
	}
	page = strings.Replace(page, "  - link \"Story number B\" [ref=eb]", "  - paragraph: more on story number q", 1)
	if got := pickLinks(map[string]string{"news": page}); got["news"] != "Story number R" {
		t.Errorf("picked %q, want the next distinctive name", got["news"])
	}
}

func TestOnlyFlag(t *testing.T) {
	o, err := parseFlags([]string{"--only", "flow,find"}, &strings.Builder{})
	if err != nil || !o.runs("flow") || !o.runs("find") || o.runs("rounds") || o.runs("tasks") {
		t.Fatalf("--only flow,find: %v %v", o.only, err)
	}
	if o, _ := parseFlags(nil, &strings.Builder{}); !o.runs("rounds") || !o.runs("flow") {
		t.Fatal("without --only every part runs")
	}
	if _, err := parseFlags([]string{"--only", "everything"}, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "want some of rounds, tasks, flow, find") {
		t.Fatalf("bad --only: %v", err)
	}
}

func TestMeasuredRows(t *testing.T) {
	v := 1.0
	rows := measuredRows([]row{{Name: "a"}, {Name: "b", Ours: measure{Median: &v}}, {Name: "c", Upstream: measure{Error: "x"}}})
	if len(rows) != 2 || rows[0].Name != "b" || rows[1].Name != "c" {
		t.Fatalf("rows: %+v", rows)
	}
}
