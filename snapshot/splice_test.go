package snapshot

import (
	"strings"
	"testing"
)

const spliceWhole = `- generic [active] [ref=e1]:
  - banner [ref=e2]:
    - heading "Shop: deals" [level=1] [ref=e3]
  - main [ref=e4]:
    - list [ref=e5]:
      - listitem [ref=e6]: Apples
      - listitem [ref=e7]: Pears
    - 'button "Add: one" [ref=e8] [cursor=pointer]'
  - contentinfo [ref=e9]: footer [ref=e5] text`

// TestSpliceReplacesTheElementsLines: the part takes the place of its
// element's line and the deeper lines after it, at its depth; the rest
// stays; with the old focus marks taken off first (ActiveOff), the part's
// own mark is the one left.
func TestSpliceReplacesTheElementsLines(t *testing.T) {
	part := "- list [ref=e5]:\n  - listitem [ref=e6]: Apples\n  - listitem [ref=e10]: Plums\n  - listitem [ref=e7]: Pears"
	got, err := Splice(spliceWhole, part, "")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(spliceWhole, "      - listitem [ref=e6]: Apples\n", "      - listitem [ref=e6]: Apples\n      - listitem [ref=e10]: Plums\n", 1)
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	got, err = Splice(ActiveOff(spliceWhole), "- list [ref=e5]:\n  - listitem [active] [ref=e6]: Apples", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "- generic [ref=e1]:\n") || !strings.Contains(got, "- listitem [active] [ref=e6]: Apples") || strings.Contains(got, "Pears") {
		t.Fatalf("focus marks or lines wrong:\n%s", got)
	}
	// A single-quoted key, and a ref-like text after a key, are read right.
	got, err = Splice(spliceWhole, "- button \"Add: one\" [ref=e8] [cursor=pointer]:\n  - text: x", "")
	if err != nil || !strings.Contains(got, "    - button \"Add: one\" [ref=e8] [cursor=pointer]:\n      - text: x\n  - contentinfo") {
		t.Fatalf("quoted key: %v\n%s", err, got)
	}
}

// TestSpliceFindsARenamedElementByTheRefItHad: an element whose name, and
// so its ref, changed is found by the ref it had; its new line and ref take
// the old one's place. The ref it had must be on a line of its role.
func TestSpliceFindsARenamedElementByTheRefItHad(t *testing.T) {
	part := "- heading \"Shop: all\" [level=1] [ref=e10]"
	got, err := Splice(spliceWhole, part, "e3")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(spliceWhole, `"Shop: deals" [level=1] [ref=e3]`, `"Shop: all" [level=1] [ref=e10]`, 1); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for _, was := range []string{"e4", "e99", "e10"} {
		if got, err := Splice(spliceWhole, part, was); err == nil {
			t.Errorf("placed at %s:\n%s", was, got)
		}
	}
}

// TestInsertPutsAPartBesideItsSibling: after a sibling's lines (and the
// lines under it) or before its line, at its depth; an empty part changes
// nothing; a part of a folding role, or a sibling not on exactly one line,
// is refused.
func TestInsertPutsAPartBesideItsSibling(t *testing.T) {
	got, top, err := Insert(spliceWhole, "- listitem [ref=e10]: Plums", "e6", false)
	if err != nil || top != "e10" {
		t.Fatal(err, top)
	}
	want := strings.Replace(spliceWhole, "      - listitem [ref=e6]: Apples\n", "      - listitem [ref=e6]: Apples\n      - listitem [ref=e10]: Plums\n", 1)
	if got != want {
		t.Fatalf("after:\n%s\nwant\n%s", got, want)
	}
	got, _, err = Insert(spliceWhole, "- listitem [ref=e10]:\n  - link \"Figs\" [ref=e11]", "e6", true)
	want = strings.Replace(spliceWhole, "      - listitem [ref=e6]: Apples\n", "      - listitem [ref=e10]:\n        - link \"Figs\" [ref=e11]\n      - listitem [ref=e6]: Apples\n", 1)
	if err != nil || got != want {
		t.Fatalf("before: %v\n%s\nwant\n%s", err, got, want)
	}
	// After a line with lines under it: past them.
	got, _, err = Insert(spliceWhole, "- navigation [ref=e12]", "e2", false)
	if err != nil || !strings.Contains(got, "Shop: deals\" [level=1] [ref=e3]\n  - navigation [ref=e12]\n  - main [ref=e4]:") {
		t.Fatalf("after a subtree: %v\n%s", err, got)
	}
	if got, top, err := Insert(spliceWhole, "", "e6", false); err != nil || got != spliceWhole || top != "" {
		t.Fatalf("empty part: %v %q", err, top)
	}
	for name, c := range map[string][2]string{
		"generic":        {"- generic [ref=e10]: x", "e6"},
		"two at the top": {"- listitem [ref=e10]\n- listitem [ref=e11]", "e6"},
		"no sibling":     {"- listitem [ref=e10]", "e77"},
		"no anchor":      {"- listitem [ref=e10]", ""},
		"text":           {"- text: hi", "e6"},
	} {
		if got, _, err := Insert(spliceWhole, c[0], c[1], false); err == nil {
			t.Errorf("%s: inserted\n%s", name, got)
		}
	}
}

// TestPartsUnderAPointerLoseTheirCursorMarks: Playwright renders no
// cursor mark under a line that has one; a part put under such a line
// (replaced, inserted, or appended under a body that has one) loses its
// marks, one elsewhere keeps them, and text that only looks like a mark
// stays.
func TestPartsUnderAPointerLoseTheirCursorMarks(t *testing.T) {
	const whole = `- generic [ref=e1]:
  - article [ref=e2] [cursor=pointer]:
    - generic [ref=e3]:
      - paragraph [ref=e4]: Body
  - list [ref=e5]:
    - listitem [ref=e6]: One`
	got, err := Splice(whole, "- paragraph [ref=e4] [cursor=pointer]:\n  - link \"a [cursor=pointer]\" [ref=e7] [cursor=pointer]", "")
	if err != nil || !strings.Contains(got, "      - paragraph [ref=e4]:\n        - link \"a [cursor=pointer]\" [ref=e7]\n  - list") {
		t.Fatalf("under a pointer: %v\n%s", err, got)
	}
	got, _, err = Insert(whole, "- listitem [ref=e8] [cursor=pointer]: Two", "e6", false)
	if err != nil || !strings.HasSuffix(got, "    - listitem [ref=e8] [cursor=pointer]: Two") {
		t.Fatalf("elsewhere: %v\n%s", err, got)
	}
	got, _, err = Insert(whole, "- paragraph [ref=e9] [cursor=pointer]: More", "e4", false)
	if err != nil || !strings.Contains(got, "      - paragraph [ref=e9]: More") {
		t.Fatalf("inserted under a pointer: %v\n%s", err, got)
	}
	// An icon (a nameless image) or an empty generic that is a click
	// target in the part is dropped by the page's walk under a pointer.
	for _, part := range []string{"- paragraph [ref=e4]:\n  - img [ref=e9] [cursor=pointer]", "- paragraph [ref=e4]:\n  - generic [ref=e9] [cursor=pointer]"} {
		if got, err := Splice(whole, part, ""); err == nil {
			t.Errorf("a bare click target under a pointer was spliced:\n%s", got)
		}
	}
	if _, err := Splice(whole, "- paragraph [ref=e4]:\n  - img \"Logo\" [ref=e9] [cursor=pointer]", ""); err != nil {
		t.Errorf("a named image under a pointer: %v", err)
	}
	body := "- generic [ref=e1] [cursor=pointer]:\n  - paragraph [ref=e2]: x"
	got, err = Append(body, "- dialog [ref=e3] [cursor=pointer]", "e1")
	if err != nil || !strings.HasSuffix(got, "\n  - dialog [ref=e3]") {
		t.Fatalf("appended under a pointer body: %v\n%s", err, got)
	}
}

// TestRemoveTakesAnElementsLinesAway: the line and the lines under it go;
// refused where the rendering around would change: a generic parent, a
// parent left with one text line, text on both sides, an unknown ref.
func TestRemoveTakesAnElementsLinesAway(t *testing.T) {
	got, err := Remove(spliceWhole, "e2")
	if err != nil || strings.Contains(got, "banner") || strings.Contains(got, "Shop: deals") || !strings.HasPrefix(got, "- generic [active] [ref=e1]:\n  - main [ref=e4]:") {
		t.Fatalf("%v\n%s", err, got)
	}
	got, err = Remove(spliceWhole, "e6")
	if want := strings.Replace(spliceWhole, "      - listitem [ref=e6]: Apples\n", "", 1); err != nil || got != want {
		t.Fatalf("%v\n%s", err, got)
	}
	for name, c := range map[string][2]string{
		"generic parent":     {"- list [ref=e1]:\n  - generic [ref=e2]:\n    - link \"a\" [ref=e3]\n    - link \"b\" [ref=e4]\n    - text: c", "e3"},
		"one text left":      {"- listitem [ref=e1]:\n  - text: a\n  - link \"b\" [ref=e2]", "e2"},
		"nothing left":       {"- list [ref=e1]:\n  - listitem [ref=e2]: a", "e2"},
		"text on both sides": {"- paragraph [ref=e1]:\n  - text: a\n  - link \"b\" [ref=e2]\n  - text: c", "e2"},
		"unknown":            {spliceWhole, "e77"},
		"top":                {"- main [ref=e1]:\n  - list [ref=e2]", "e1"},
	} {
		if got, err := Remove(c[0], c[1]); err == nil {
			t.Errorf("%s: removed\n%s", name, got)
		}
	}
}

// TestSpliceRefusesWhatItCannotPlace: a part that is not one element of a
// role that stands alone, or whose ref the page's snapshot does not hold
// once with that role, is refused.
func TestSpliceRefusesWhatItCannotPlace(t *testing.T) {
	for name, part := range map[string]string{
		"generic":          "- generic [ref=e5]:\n  - text: a",
		"two at the top":   "- list [ref=e5]\n- list [ref=e11]",
		"no ref":           "- list:\n  - listitem: a",
		"unknown ref":      "- list [ref=e55]:\n  - listitem: a",
		"other role":       "- navigation [ref=e5]:\n  - listitem: a",
		"text":             "- text: hello",
		"not a line":       "list [ref=e5]",
		"ref only in text": "- contentinfo [ref=e99]: x",
	} {
		if got, err := Splice(spliceWhole, part, ""); err == nil {
			t.Errorf("%s: spliced\n%s", name, got)
		}
	}
	// The ref in the footer's text is not the list's line.
	dup := spliceWhole + "\n- list [ref=e5]"
	if _, err := Splice(dup, "- list [ref=e5]", ""); err == nil {
		t.Error("a ref on two lines was spliced")
	}
}

func TestLineKey(t *testing.T) {
	for l, want := range map[string][2]string{
		`  - heading "Shop: deals" [level=1] [ref=e3]`:          {"heading", "e3"},
		`- 'button "it''s [ref=e1]" [ref=e8] [cursor=pointer]'`: {"button", "e8"},
		`- link "a \" [ref=e2]" [ref=f1e9]:`:                    {"link", "f1e9"},
		`- contentinfo [ref=e9]: footer [ref=e5] text`:          {"contentinfo", "e9"},
		`  - text: [ref=e3]`:                                    {"text", ""},
		`- /url: https://x`:                                     {"/url", ""},
	} {
		if r, f := LineKey(l); r != want[0] || f != want[1] {
			t.Errorf("LineKey(%q) = %q, %q; want %q, %q", l, r, f, want[0], want[1])
		}
	}
}

// TestActiveOnTopMarksTheBodysLine: focus on the body puts the mark on the
// top line, before its ref (not in a name that reads like one), once; a
// top line without a ref is refused.
func TestActiveOnTopMarksTheBodysLine(t *testing.T) {
	for in, want := range map[string]string{
		"- generic [ref=e1]:\n  - button \"Go\" [ref=e2]":   "- generic [active] [ref=e1]:\n  - button \"Go\" [ref=e2]",
		"- generic [ref=e1] [cursor=pointer]:\n  - text: x": "- generic [active] [ref=e1] [cursor=pointer]:\n  - text: x",
		"- generic [active] [ref=e1]:\n  - text: x":         "- generic [active] [ref=e1]:\n  - text: x",
		`- 'generic "a [ref=e1]: b" [ref=e1]'`:              `- 'generic "a [ref=e1]: b" [active] [ref=e1]'`,
		"- generic [ref=e1]":                                "- generic [active] [ref=e1]",
	} {
		got, err := ActiveOnTop(in)
		if err != nil || got != want {
			t.Errorf("ActiveOnTop(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if got, err := ActiveOnTop("- text: no ref\n- button [ref=e2]"); err == nil {
		t.Errorf("a top line without a ref was marked: %q", got)
	}
}

// TestAppendAddsAfterTheBodysLastChild: an element added at the end of the
// body goes after the last lines, one level under the body's line; refused
// when the top line is not the body's, the body's last child is text, or
// the part starts with text.
func TestAppendAddsAfterTheBodysLastChild(t *testing.T) {
	got, err := Append(spliceWhole, "- dialog \"Modal\" [ref=e20]:\n  - button \"OK\" [ref=e21]", "e1")
	if err != nil {
		t.Fatal(err)
	}
	if want := spliceWhole + "\n  - dialog \"Modal\" [ref=e20]:\n    - button \"OK\" [ref=e21]"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got, err := Append(spliceWhole, "", "e1"); err != nil || got != spliceWhole {
		t.Errorf("an empty part changed the snapshot: %v", err)
	}
	for name, c := range map[string][3]string{
		"not the body":          {spliceWhole, "- status [ref=e20]: Saved", "e2"},
		"two at the top":        {spliceWhole + "\n- list [ref=e30]", "- status [ref=e20]: Saved", "e1"},
		"text last":             {"- generic [ref=e1]:\n  - list [ref=e2]\n  - text: tail", "- status [ref=e20]: Saved", "e1"},
		"part starts with text": {spliceWhole, "- text: hello", "e1"},
		"no children":           {"- generic [ref=e1]", "- status [ref=e20]: Saved", "e1"},
	} {
		if got, err := Append(c[0], c[1], c[2]); err == nil {
			t.Errorf("%s: appended\n%s", name, got)
		}
	}
	if got := ActiveOff("- generic [active] [ref=e1]:\n  - button \"[active]\" [active] [ref=e2]"); got != "- generic [ref=e1]:\n  - button \"[active]\" [ref=e2]" {
		t.Errorf("ActiveOff: %q", got)
	}
}

// TestSpliceReplacesAFramesLines: a frame walked again (another origin's,
// which the watch cannot read) replaces its own line and its document's
// lines, refs prefixed as in a walk of the page; a frame is never put
// among others.
func TestSpliceReplacesAFramesLines(t *testing.T) {
	whole := "- main [ref=e2]:\n  - heading \"News\" [level=1] [ref=e3]\n  - iframe [ref=e6]:\n    - paragraph [ref=f1e2]: Buy now\n  - paragraph [ref=e7]: After"
	got, err := Splice(whole, "- iframe [ref=e6]:\n  - paragraph [ref=f1e2]: Buy now\n  - button \"Shop\" [ref=f1e3]", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "- main [ref=e2]:\n  - heading \"News\" [level=1] [ref=e3]\n  - iframe [ref=e6]:\n    - paragraph [ref=f1e2]: Buy now\n    - button \"Shop\" [ref=f1e3]\n  - paragraph [ref=e7]: After"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if _, _, err := Insert(whole, "- iframe [ref=e9]:\n  - paragraph [ref=f2e2]: Ad", "e3", false); err == nil || !strings.Contains(err.Error(), "(iframe)") {
		t.Fatalf("an inserted frame: %v", err)
	}
}
