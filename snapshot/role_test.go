package snapshot

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestRoleTreeGolden(t *testing.T) {
	nodes := axFixture(t, "lab.ax.json")
	tests := []struct {
		golden string
		opts   RoleOptions
	}{
		{"lab.role.yml", RoleOptions{}},
		{"lab.role.interactive.yml", RoleOptions{Interactive: true}},
		{"lab.role.compact.yml", RoleOptions{Compact: true}},
		{"lab.role.depth1.yml", RoleOptions{MaxDepth: 1}},
		{"lab.role.efficient.yml", RoleOptions{Interactive: true, Compact: true, MaxDepth: 6}},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			tr := RoleTree(nodes, tc.opts)
			text := tr.Render()
			golden(t, tc.golden, text)
			if got := mustParse(t, text).Render(); got != text {
				t.Error("role rendering does not round-trip through Parse")
			}
			// Every ref on a line resolves, and nothing else does.
			refs := 0
			tr.Walk(func(n *Node, _ int) bool {
				if n.Ref != "" {
					refs++
					if _, ok := tr.RoleRef(n.Ref); !ok {
						t.Errorf("RoleRef(%s) missing", n.Ref)
					}
					if _, ok := tr.Backend(n.Ref); !ok {
						t.Errorf("Backend(%s) missing", n.Ref)
					}
				}
				return true
			})
			if refs != len(tr.RoleRefs()) {
				t.Errorf("%d refs on lines, %d in the map", refs, len(tr.RoleRefs()))
			}
		})
	}
	refs, err := json.MarshalIndent(RoleTree(nodes, RoleOptions{}).RoleRefs(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "lab.role.refs.json", string(refs)+"\n")
}

func TestRoleTreeNth(t *testing.T) {
	// Two "Save" buttons, the first nested deeper than the second, and an
	// "OK" button in each of two frames.
	nodes := axJSON(t, "["+strings.Join([]string{
		axNode("1", "RootWebArea", "", []string{"2", "5", "6"}, `"frameId":"MAIN","backendDOMNodeId":1`),
		axNode("2", "group", "", []string{"3"}, ""),
		axNode("3", "group", "", []string{"4"}, ""),
		axNode("4", "button", "Save", nil, ""),
		axNode("5", "button", "Save", nil, ""),
		axNode("6", "button", "OK", nil, ""),
		axNode("7", "RootWebArea", "", []string{"8"}, `"frameId":"CHILD","backendDOMNodeId":7`),
		axNode("8", "button", "OK", nil, ""),
	}, ",")+"]")
	tests := []struct {
		name string
		opts RoleOptions
		want string
		refs map[string]RoleRef
	}{
		{"full", RoleOptions{},
			"- group:\n  - group:\n    - button \"Save\" [ref=r1]\n- button \"Save\" [ref=r2] [nth=1]\n- button \"OK\" [ref=r3]\n- button \"OK\" [ref=r4]",
			map[string]RoleRef{
				"r1": {Role: "button", Name: "Save", FrameID: "MAIN"},
				"r2": {Role: "button", Name: "Save", Nth: 1, FrameID: "MAIN"},
				"r3": {Role: "button", Name: "OK", FrameID: "MAIN"},
				"r4": {Role: "button", Name: "OK", FrameID: "CHILD"},
			}},
		{"depth hides the first duplicate, nth still counts it", RoleOptions{MaxDepth: 1},
			"- group:\n  - group\n- button \"Save\" [ref=r1] [nth=1]\n- button \"OK\" [ref=r2]\n- button \"OK\" [ref=r3]",
			map[string]RoleRef{
				"r1": {Role: "button", Name: "Save", Nth: 1, FrameID: "MAIN"},
				"r2": {Role: "button", Name: "OK", FrameID: "MAIN"},
				"r3": {Role: "button", Name: "OK", FrameID: "CHILD"},
			}},
		{"compact then interactive", RoleOptions{Compact: true, Interactive: true},
			"- button \"Save\" [ref=r1]\n- button \"Save\" [ref=r2] [nth=1]\n- button \"OK\" [ref=r3]\n- button \"OK\" [ref=r4]", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := RoleTree(nodes, tc.opts)
			if got := tr.Render(); got != tc.want {
				t.Errorf("Render:\n%s\nwant:\n%s", got, tc.want)
			}
			if tc.refs != nil && !reflect.DeepEqual(tr.RoleRefs(), tc.refs) {
				t.Errorf("RoleRefs = %v\nwant %v", tr.RoleRefs(), tc.refs)
			}
			if tr.Mode != ModeRole {
				t.Errorf("Mode = %v", tr.Mode)
			}
		})
	}
}

func TestRoleOf(t *testing.T) {
	tests := []struct {
		chrome, role string
		action       roleAction
	}{
		{"button", "button", roleKeep},
		{"image", "img", roleKeep},
		{"Iframe", "iframe", roleKeep},
		{"MenuListOption", "option", roleKeep},
		{"StaticText", "text", roleText},
		{"InlineTextBox", "", roleDrop},
		{"ListMarker", "", roleDrop},
		{"LineBreak", "", roleDrop},
		{"RootWebArea", "", roleLift},
		{"MenuListPopup", "", roleLift},
		{"LabelText", "", roleLift},
		{"none", "", roleLift},
		{"", "", roleLift},
	}
	for _, tc := range tests {
		role, action := roleOf(tc.chrome)
		if role != tc.role || action != tc.action {
			t.Errorf("roleOf(%q) = %q, %d; want %q, %d", tc.chrome, role, action, tc.role, tc.action)
		}
	}
}

func TestNormalizeSpace(t *testing.T) {
	tests := map[string]string{
		"":                 "",
		"plain":            "plain",
		"  pad  ":          "pad",
		"a\n\tb":           "a b",
		"a  b":             "a b",
		"nb\u00a0sp":       "nb sp",
		"zero\u200bwidth":  "zerowidth",
		"soft\u00adhyphen": "softhyphen",
		" ":                "",
	}
	for in, want := range tests {
		if got := normalizeSpace(in); got != want {
			t.Errorf("normalizeSpace(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStableRefs(t *testing.T) {
	before, after := axFixture(t, "lab.ax.json"), axFixture(t, "lab.after.ax.json")
	t.Run("role", func(t *testing.T) {
		prev := RoleTree(before, RoleOptions{})
		cur := RoleTree(after, RoleOptions{Previous: prev})
		for ref, id := range prev.RoleRefs() {
			if got, ok := cur.RoleRef(ref); ok && got != id {
				t.Errorf("ref %s was %+v, now %+v", ref, id, got)
			}
		}
		// "Other page" became "Other page (3)": a new element, numbered after
		// the highest ref of prev.
		n, ok := cur.Find("r37")
		if !ok || n.Name != "Other page (3)" {
			t.Errorf("r37 = %+v, want the renamed link", n)
		}
		if _, ok := cur.RoleRef("r5"); ok {
			t.Error("the old link's ref r5 still resolves")
		}
		// A Previous of another mode is ignored.
		if got := RoleTree(after, RoleOptions{Previous: FromAXTree(before, AXOptions{})}).Render(); got != RoleTree(after, RoleOptions{}).Render() {
			t.Error("an ARIA Previous changed a Role tree")
		}
	})
	t.Run("aria", func(t *testing.T) {
		prev := FromAXTree(before, AXOptions{})
		cur := FromAXTree(after, AXOptions{Previous: prev})
		same := 0
		cur.Walk(func(n *Node, _ int) bool {
			if old, ok := prev.Backend(n.Ref); ok {
				if now, _ := cur.Backend(n.Ref); now != old {
					t.Errorf("ref %s moved from node %d to %d", n.Ref, old, now)
				}
				same++
			}
			return true
		})
		if same < 100 {
			t.Errorf("only %d refs kept", same)
		}
	})
}
