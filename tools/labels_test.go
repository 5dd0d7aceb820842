package tools

import (
	"os"
	"testing"
)

func TestParseLabels(t *testing.T) {
	snap := `- generic [ref=e1] [box=0,0,800,600]:
  - button "Go" [ref=e2] [cursor=pointer] [box=10,20,30,40]
  - 'button "Menu: open" [expanded] [ref=f2e3] [box=50,20,28,21]': ☰
  - text: no ref [box=1,1,1,1]
  - button "Hidden" [ref=e4] [box=5,5,0,0]
  - iframe [ref=e5] [box=100,100,300,200]:
    - button "In frame" [ref=f1e1] [box=1,2,3,4]
  - link "After" [ref=e6] [box=10,700,50,20]`
	got := parseLabels(snap)
	var refs []string
	for _, l := range got {
		refs = append(refs, l.Ref+" "+l.What)
	}
	want := []string{`e1 generic`, `e2 button "Go"`, `f2e3 button "Menu: open"`, `e5 iframe`, `e6 link "After"`}
	if len(refs) != len(want) {
		t.Fatalf("labels %q, want %q", refs, want)
	}
	for i := range want {
		if refs[i] != want[i] {
			t.Errorf("label %d: %q, want %q", i, refs[i], want[i])
		}
	}
	if l := got[1]; l.X != 10 || l.Y != 20 || l.W != 30 || l.H != 40 {
		t.Errorf("box of e2: %+v", l)
	}
	// In a 800x600 viewport e6 is below the fold; interactive refs come
	// first when the limit bites, and the result is in document order.
	vis := pickLabels(got, 2, 800, 600, false)
	if len(vis) != 2 || vis[0].Ref != "e2" || vis[1].Ref != "f2e3" {
		t.Errorf("picked %+v", vis)
	}
	if all := pickLabels(got, 150, 800, 600, true); len(all) != 5 {
		t.Errorf("full page picked %d", len(all))
	}
}

func TestParseLabelsGolden(t *testing.T) {
	// A recorded fixture, not a golden this package writes: -update does
	// not make it, so a missing one is a failure with the way to record it.
	b, err := os.ReadFile("../testdata/snapshot/lab.boxes.ai.yml")
	if err != nil {
		t.Fatalf("read the boxes fixture (record it with testdata/snapshot/capture.mjs, see its header): %v", err)
	}
	labels := parseLabels(string(b))
	if len(labels) < 10 {
		t.Fatalf("only %d labels from the boxes golden", len(labels))
	}
	for _, l := range labels {
		if l.W <= 0 || l.H <= 0 || l.Ref == "" {
			t.Errorf("bad label %+v", l)
		}
	}
}
