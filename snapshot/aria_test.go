package snapshot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// axJSON decodes AX nodes written as JSON in a test.
func axJSON(t testing.TB, js string) []*accessibility.Node {
	t.Helper()
	var nodes []*accessibility.Node
	if err := jsonv2.Unmarshal([]byte(js), &nodes); err != nil {
		t.Fatalf("decode AX nodes: %v", err)
	}
	return nodes
}

// axNode writes one AX node as JSON: role, name, children and extra fields.
// Unless extra sets it, the BackendDOMNodeID is the (numeric) id.
func axNode(id, role, name string, kids []string, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"nodeId":%q,"ignored":false,"role":{"type":"role","value":%q}`, id, role)
	if name != "" {
		fmt.Fprintf(&b, `,"name":{"type":"computedString","value":%q}`, name)
	}
	if len(kids) > 0 {
		b.WriteString(`,"childIds":[`)
		for i, k := range kids {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q", k)
		}
		b.WriteString("]")
	}
	if extra != "" {
		b.WriteString("," + extra)
	}
	if !strings.Contains(extra, "backendDOMNodeId") {
		fmt.Fprintf(&b, `,"backendDOMNodeId":%s`, id) // test ids are numbers
	}
	b.WriteString("}")
	return b.String()
}

func TestFromAXTreeGolden(t *testing.T) {
	for _, name := range []string{"lab", "lab.after"} {
		t.Run(name, func(t *testing.T) {
			tr := FromAXTree(axFixture(t, name+".ax.json"), AXOptions{})
			text := tr.Render()
			golden(t, name+".aria.yml", text)
			if got := mustParse(t, text).Render(); got != text {
				t.Error("ARIA rendering does not round-trip through Parse")
			}
		})
	}
}

func TestFromAXTree(t *testing.T) {
	nodes := "[" + strings.Join([]string{
		axNode("1", "RootWebArea", "Doc", []string{"2"}, `"backendDOMNodeId":1,"frameId":"F"`),
		`{"nodeId":"2","ignored":true,"role":{"type":"role","value":"none"},"parentId":"1","childIds":["3","4"]}`,
		axNode("3", "button", "Go", []string{"5"}, `"parentId":"2","backendDOMNodeId":30,"properties":[{"name":"focused","value":{"type":"booleanOrUndefined","value":true}},{"name":"pressed","value":{"type":"tristate","value":"mixed"}}]`),
		axNode("4", "textbox", "Q", nil, `"parentId":"2","backendDOMNodeId":40,"value":{"type":"string","value":"typed\ntext"},"description":{"type":"string","value":"help"}`),
		axNode("5", "StaticText", "Go", []string{"6"}, `"parentId":"3","backendDOMNodeId":50`),
		axNode("6", "InlineTextBox", "Go", nil, `"parentId":"5"`),
	}, ",") + "]"
	tests := []struct {
		name    string
		limit   int
		want    string
		backend map[string]int64
	}{
		{"all", 0, "- RootWebArea \"Doc\" [ref=ax1]:\n" +
			"  - button \"Go\" [active] [pressed=mixed] [ref=ax2]:\n" +
			"    - StaticText \"Go\" [ref=ax3]\n" +
			"  - textbox \"Q\" [ref=ax4]: \"typed\\ntext\"\n" +
			"    - /description: help",
			map[string]int64{"ax1": 1, "ax2": 30, "ax3": 50, "ax4": 40}},
		{"limit", 2, "- RootWebArea \"Doc\" [ref=ax1]:\n" +
			"  - button \"Go\" [active] [pressed=mixed] [ref=ax2]\n" +
			"[...TRUNCATED - 2 more nodes, node limit 2]",
			map[string]int64{"ax1": 1, "ax2": 30}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := FromAXTree(axJSON(t, nodes), AXOptions{Limit: tc.limit})
			if got := tr.Render(); got != tc.want {
				t.Errorf("Render:\n%s\nwant:\n%s", got, tc.want)
			}
			for ref, want := range tc.backend {
				if got, ok := tr.Backend(ref); !ok || got != want {
					t.Errorf("Backend(%s) = %d, %v; want %d", ref, got, ok, want)
				}
			}
			if _, ok := tr.Backend("ax9"); ok {
				t.Error("Backend(ax9) resolved")
			}
		})
	}
}

func TestFromAXTreeLimits(t *testing.T) {
	// A flat page of 3,000 buttons under one root.
	kids := make([]string, 3000)
	parts := []string{""}
	for i := range kids {
		kids[i] = fmt.Sprint(i + 2)
		parts = append(parts, axNode(kids[i], "button", fmt.Sprint("b", i), nil, `"parentId":"1"`))
	}
	parts[0] = axNode("1", "RootWebArea", "", kids, "")
	nodes := axJSON(t, "["+strings.Join(parts, ",")+"]")
	tests := []struct {
		limit, wantLimit int
	}{
		{0, DefaultAXLimit}, {-1, DefaultAXLimit}, {10, 10}, {MaxAXLimit + 1000, MaxAXLimit},
	}
	for _, tc := range tests {
		tr := FromAXTree(nodes, AXOptions{Limit: tc.limit})
		if tr.Limit != tc.wantLimit || tr.Omitted != 3001-tc.wantLimit {
			t.Errorf("Limit %d: tree Limit=%d Omitted=%d, want %d and %d", tc.limit, tr.Limit, tr.Omitted, tc.wantLimit, 3001-tc.wantLimit)
		}
		if got := tr.Stats().Refs; got != tc.wantLimit {
			t.Errorf("Limit %d: %d refs", tc.limit, got)
		}
	}
}

func TestAXGraphMalformed(t *testing.T) {
	tests := map[string]string{
		"cycle": "[" + axNode("1", "generic", "a", []string{"2"}, "") + "," +
			axNode("2", "generic", "b", []string{"1"}, `"parentId":"1"`) + "]",
		"self child":      "[" + axNode("1", "generic", "a", []string{"1"}, "") + "]",
		"missing child":   "[" + axNode("1", "generic", "a", []string{"9"}, "") + "]",
		"shared child":    "[" + axNode("1", "generic", "a", []string{"2", "3"}, "") + "," + axNode("2", "button", "x", []string{"3"}, "") + "," + axNode("3", "link", "y", nil, "") + "]",
		"duplicate ids":   "[" + axNode("1", "generic", "a", nil, "") + "," + axNode("1", "button", "b", nil, "") + "]",
		"no role or name": `[{"nodeId":"1","ignored":false}]`,
		"null":            `[null]`,
		"empty":           `[]`,
	}
	for name, js := range tests {
		t.Run(name, func(t *testing.T) {
			nodes := axJSON(t, js)
			aria := FromAXTree(nodes, AXOptions{})
			role := RoleTree(nodes, RoleOptions{})
			// Every node appears at most once, and each distinct id does.
			ids := map[accessibility.NodeID]bool{}
			for _, n := range nodes {
				if n != nil {
					ids[n.NodeID] = true
				}
			}
			seen := map[int64]bool{}
			aria.Walk(func(n *Node, _ int) bool {
				if seen[n.backend] {
					t.Errorf("node %d twice", n.backend)
				}
				seen[n.backend] = true
				return true
			})
			if name != "self child" && name != "cycle" && len(seen) != len(ids) {
				t.Errorf("ARIA tree has %d nodes, want %d:\n%s", len(seen), len(ids), aria.Render())
			}
			_ = role.Render()
		})
	}
}
