package smoke

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/textdist"

	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// snapshotText returns the snapshot a response holds: the ```yaml block
// under "### Snapshot" (upstream's and our format), or the lines a ```diff
// block there shows as present (our action responses), else the first
// ```yaml block, else the whole text.
func snapshotText(resp string) string {
	s := resp
	if i := strings.Index(s, "### Snapshot"); i >= 0 {
		s = s[i:]
	}
	yi, di := strings.Index(s, "```yaml\n"), strings.Index(s, "```diff\n")
	switch {
	case yi >= 0 && (di < 0 || yi < di):
		return fenced(s[yi+len("```yaml\n"):])
	case di >= 0:
		var keep []string
		for _, l := range strings.Split(fenced(s[di+len("```diff\n"):]), "\n") {
			if len(l) < 2 || l[0] == '-' || l[0] != '+' && l[0] != '~' && l[0] != ' ' {
				continue // removed, or a compact diff's path line
			}
			body := l[2:]
			if strings.HasPrefix(strings.TrimLeft(body, " "), "- ") {
				keep = append(keep, body) // a line with its indentation
				continue
			}
			// A compact diff's line: the element, and the elements its
			// summary names ("listitem [ref=e8] [new]: checkbox "x" [ref=e9]").
			for _, m := range diffElementRE.FindAllString(body, -1) {
				keep = append(keep, "- "+m)
			}
		}
		return strings.Join(keep, "\n")
	}
	return resp
}

// diffElementRE is an element with a ref in a compact diff's line: role,
// quoted name, attributes, ref.
var diffElementRE = regexp.MustCompile(`[a-z]+(?: "(?:[^"\\]|\\.)*")?(?: \[[^\]]+\])*? \[ref=[a-z0-9]+\](?: \[[a-z]+(?:=[^\]]*)?\])*`)

// fullSnapshot says resp holds a whole page snapshot (a ```yaml block
// under "### Snapshot"), not a diff or a link to a file.
func fullSnapshot(resp string) bool {
	i := strings.Index(resp, "### Snapshot")
	return i >= 0 && strings.Contains(resp[i:], "```yaml\n")
}

func fenced(s string) string {
	if j := strings.Index(s, "\n```"); j >= 0 {
		return s[:j]
	}
	return s
}

// element is one element line of a snapshot.
type element struct {
	role, label, ref string
}

func (e element) String() string {
	if e.label == "" {
		return e.role
	}
	return fmt.Sprintf("%s %q", e.role, e.label)
}

// elements lists the elements of the snapshot in resp, in document order.
func elements(resp string) []element {
	tree, err := snapshot.Parse(snapshotText(resp))
	if err != nil {
		return nil
	}
	var out []element
	tree.Walk(func(n *snapshot.Node, _ int) bool {
		if n.Kind == snapshot.KindElement && n.Role != "" {
			label := n.Name
			if label == "" {
				label = n.Text
			}
			out = append(out, element{role: n.Role, label: label, ref: n.Ref})
		}
		return true
	})
	return out
}

// find returns the element want names: role equal (any case), then the
// label equal, or — when nothing is equal — containing the name in any
// case; Nth picks among the matches.
func find(els []element, want RoleName) (element, bool) {
	var exact, loose []element
	for _, e := range els {
		if !strings.EqualFold(e.role, want.Role) {
			continue
		}
		switch {
		case want.Name == "" || e.label == want.Name:
			exact = append(exact, e)
		case strings.Contains(strings.ToLower(e.label), strings.ToLower(want.Name)):
			loose = append(loose, e)
		}
	}
	pick := exact
	if len(pick) == 0 {
		pick = loose
	}
	if want.Nth < len(pick) {
		return pick[want.Nth], true
	}
	return element{}, false
}

// closest names up to n elements of els most like want, for an error.
func closest(els []element, want RoleName, n int) string {
	type scored struct {
		e element
		d int
	}
	seen := map[string]bool{}
	var all []scored
	for _, e := range els {
		if seen[e.String()] {
			continue
		}
		seen[e.String()] = true
		d := distance(strings.ToLower(e.label), strings.ToLower(want.Name))
		if !strings.EqualFold(e.role, want.Role) {
			d += 1000
		}
		all = append(all, scored{e, d})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].d < all[j].d })
	if len(all) == 0 {
		return "the snapshot has no elements"
	}
	var names []string
	for i := 0; i < len(all) && i < n; i++ {
		names = append(names, quote(all[i].e.String()))
	}
	return "closest: " + strings.Join(names, ", ")
}

// distance is the Levenshtein distance of a and b (bytes), capped inputs.
// distance is the edit distance of a and b, each cut to 200 bytes so a
// long name cannot make the hint expensive.
func distance(a, b string) int {
	return textdist.Levenshtein(a[:min(len(a), 200)], b[:min(len(b), 200)])
}
