package snapshot

import "testing"

func TestClassifyRef(t *testing.T) {
	tests := map[string]RefKind{
		"e1": RefAI, "e123": RefAI, "f1e2": RefAI, "f12e345": RefAI,
		"ax1": RefARIA, "ax2000": RefARIA,
		"r1": RefRole, "r42": RefRole,
		"": RefNone, "e": RefNone, "fe1": RefNone, "f1": RefNone, "ax": RefNone, "r": RefNone,
		"e1a": RefNone, "button": RefNone, "#id": RefNone, "E1": RefNone, "r-1": RefNone,
	}
	for in, want := range tests {
		if got := ClassifyRef(in); got != want {
			t.Errorf("ClassifyRef(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestClassOf(t *testing.T) {
	tests := map[string]RoleClass{
		"button": ClassInteractive, "treeitem": ClassInteractive, "heading": ClassContent,
		"navigation": ClassContent, "generic": ClassStructural, "application": ClassStructural,
		"paragraph": ClassOther, "img": ClassOther, "Button": ClassOther,
	}
	for in, want := range tests {
		if got := ClassOf(in); got != want {
			t.Errorf("ClassOf(%q) = %v, want %v", in, got, want)
		}
	}
	// The sizes pin roleClasses' three lists (15 interactive, 10 content,
	// 16 structural roles), which decide refs in Role mode and what Compact
	// drops: adding a role to a class, or dropping one, must change them here
	// too.
	counts := map[RoleClass]int{}
	for _, c := range roleClasses {
		counts[c]++
	}
	if counts[ClassInteractive] != 15 || counts[ClassContent] != 10 || counts[ClassStructural] != 16 {
		t.Errorf("class sizes = %v, want 15/10/16", counts)
	}
}

func TestFindAndWalk(t *testing.T) {
	tr := mustParse(t, readFixture(t, "brief.ai.yml"))
	n, ok := tr.Find("f1e2")
	if !ok || n.Name != "In frame" {
		t.Fatalf("Find(f1e2) = %+v, %v", n, ok)
	}
	if _, ok := tr.Find("e99"); ok {
		t.Error("Find(e99) found a node")
	}
	if _, ok := tr.Find(""); ok {
		t.Error("Find(\"\") found a node")
	}
	var skipped []string
	tr.Walk(func(n *Node, depth int) bool {
		skipped = append(skipped, n.Ref)
		return n.Role != "generic" || depth > 0 // do not enter the root
	})
	if len(skipped) != 1 {
		t.Errorf("Walk entered a skipped node: %v", skipped)
	}
	if ModeAI.String() != "ai" || ModeARIA.String() != "aria" || ModeRole.String() != "role" {
		t.Error("Mode names")
	}
}
