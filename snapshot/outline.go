package snapshot

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// OutlineOptions bound an outline.
type OutlineOptions struct {
	// Budget is the most characters the outline may take. If zero, 1500.
	Budget int
}

// landmarkRoles are the roles an outline lists as regions, with what each
// is called when it has no name.
var landmarkRoles = map[string]bool{
	"banner": true, "navigation": true, "main": true, "contentinfo": true,
	"complementary": true, "search": true, "form": true, "region": true,
	"dialog": true, "alertdialog": true,
}

// fieldRoles are form controls that take a value.
var fieldRoles = map[string]bool{
	"textbox": true, "searchbox": true, "combobox": true, "checkbox": true,
	"radio": true, "spinbutton": true, "slider": true, "switch": true, "listbox": true,
}

// outlineItem is one line an outline may show under a region.
type outlineItem struct {
	order    int // document order
	priority int // lower is shown first when the budget is short
	line     string
}

type outlineRegion struct {
	node   *Node
	order  int
	depth  int // nesting among regions (0: top level)
	links  int
	button int
	fields int
	heads  int
	items  []outlineItem
}

// Outline summarises a page for an agent that has not seen it yet: one line
// per landmark region (banner, navigation, main, forms, dialogs…) with its
// ref and how many links, buttons and fields it holds, and under each the
// lines that orient (headings, form fields, buttons), chosen by priority
// until the budget is spent: dialogs and h1 first, then fields, h2,
// buttons, h3. Content outside every landmark is counted under "page". The
// first line counts the whole page. Lines keep their refs, so an agent can
// act on them or pass a region's ref to a subtree snapshot.
func Outline(t *Tree, o OutlineOptions) string {
	budget := o.Budget
	if budget <= 0 {
		budget = 1500
	}
	page := &outlineRegion{order: -1}
	var regions []*outlineRegion
	total := Stats{}
	links, buttons, fields := 0, 0, 0
	order := 0
	var visit func(nodes []*Node, in *outlineRegion, depth int)
	visit = func(nodes []*Node, in *outlineRegion, depth int) {
		for _, n := range nodes {
			order++
			countRef(&total, n)
			cur := in
			if n.Kind == KindElement && landmarkRoles[n.Role] && n.Ref != "" && depth < 3 {
				rd := 0
				if in != page {
					rd = in.depth + 1
				}
				cur = &outlineRegion{node: n, order: order, depth: rd}
				regions = append(regions, cur)
			}
			if n.Kind == KindElement {
				switch {
				case n.Role == "link":
					cur.links++
					links++
				case n.Role == "button":
					cur.button++
					buttons++
					if n.Name != "" {
						cur.items = append(cur.items, outlineItem{order, 5, shortLine(n)})
					}
				case fieldRoles[n.Role]:
					cur.fields++
					fields++
					cur.items = append(cur.items, outlineItem{order, 3, shortLine(n)})
				case n.Role == "heading":
					cur.heads++
					lvl, _ := n.Attr("level")
					pr := map[string]int{"1": 1, "2": 4, "3": 6}[lvl]
					if pr == 0 {
						pr = 7
					}
					cur.items = append(cur.items, outlineItem{order, pr, shortLine(n)})
				case n.Role == "alert" || n.Role == "status":
					if n.Name != "" || n.Text != "" {
						cur.items = append(cur.items, outlineItem{order, 2, shortLine(n)})
					}
				}
			}
			visit(n.Children, cur, depth+1)
		}
	}
	visit(t.Roots, page, 0)

	var b strings.Builder
	fmt.Fprintf(&b, "- page: %d links, %d buttons, %d fields, %d refs", links, buttons, fields, total.Refs)
	head := b.String()
	all := append([]*outlineRegion{}, regions...)
	if page.links+page.button+page.fields+len(page.items) > 0 {
		all = append([]*outlineRegion{page}, all...)
	}
	// Region lines come first in priority (they hold the counts and the
	// refs for subtree snapshots), then items by priority, document order.
	type pick struct {
		region *outlineRegion
		item   outlineItem
		size   int
	}
	used := utf8.RuneCountInString(head)
	shown := map[*outlineRegion]bool{}
	regionLine := func(r *outlineRegion) string {
		if r == page {
			return "- outside the landmarks:" + counts(r)
		}
		return strings.Repeat("  ", r.depth) + shortLine(r.node) + ":" + counts(r)
	}
	omittedRegions := 0
	for _, r := range all {
		l := regionLine(r)
		if used+1+utf8.RuneCountInString(l) > budget {
			omittedRegions++
			continue
		}
		used += 1 + utf8.RuneCountInString(l)
		shown[r] = true
	}
	var picks []pick
	for _, r := range all {
		if !shown[r] {
			continue
		}
		for _, it := range r.items {
			picks = append(picks, pick{r, it, 0})
		}
	}
	sort.SliceStable(picks, func(i, j int) bool {
		if picks[i].item.priority != picks[j].item.priority {
			return picks[i].item.priority < picks[j].item.priority
		}
		return picks[i].item.order < picks[j].item.order
	})
	chosen := map[*outlineRegion][]outlineItem{}
	omitted := 0
	const reserve = 60 // the "… N more" line
	for _, p := range picks {
		ind := p.region.depth + 1
		if p.region == page {
			ind = 1
		}
		size := 1 + 2*ind + utf8.RuneCountInString(p.item.line)
		if used+size > budget-reserve {
			omitted++
			continue
		}
		used += size
		chosen[p.region] = append(chosen[p.region], p.item)
	}
	lines := []string{}
	for _, r := range all {
		if !shown[r] {
			continue
		}
		lines = append(lines, regionLine(r))
		items := chosen[r]
		sort.Slice(items, func(i, j int) bool { return items[i].order < items[j].order })
		ind := strings.Repeat("  ", r.depth+1)
		if r == page {
			ind = "  "
		}
		for _, it := range items {
			lines = append(lines, ind+it.line)
		}
	}
	b.Reset()
	b.WriteString(head)
	for _, l := range lines {
		b.WriteByte('\n')
		b.WriteString(l)
	}
	if omitted+omittedRegions > 0 {
		fmt.Fprintf(&b, "\n- … %d more headings, fields and buttons", omitted)
		if omittedRegions > 0 {
			fmt.Fprintf(&b, ", %d more regions", omittedRegions)
		}
		b.WriteString(" not shown")
	}
	return b.String()
}

func counts(r *outlineRegion) string {
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(r.links, "link", "links")
	add(r.button, "button", "buttons")
	add(r.fields, "field", "fields")
	add(r.heads, "heading", "headings")
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ", ")
}

// maxOutlineName bounds a name in an outline or search line.
const maxOutlineName = 80

// shortLine renders n as one line without its children, property lines or
// pointer hints: role, name (cut at 80 characters), state attributes, ref,
// and a short inline value.
func shortLine(n *Node) string {
	if n.Kind == KindText {
		return "- text: " + clip(n.Text, maxOutlineName)
	}
	if n.Kind == KindOpaque {
		return clip(n.Raw, maxOutlineName+20)
	}
	c := Node{Kind: KindElement, Role: n.Role, Name: clip(n.Name, maxOutlineName), Regex: n.Regex, Ref: n.Ref}
	for _, a := range n.Attrs {
		if beforeRef(a.Key) {
			c.Attrs = append(c.Attrs, a)
		}
	}
	if n.Text != "" {
		c.Text = clip(n.Text, 40)
	}
	return string(appendLine(nil, &c, lineOpts{noColon: true}))
}

// clip cuts s to n characters (runes) in all, the last one "…" when it
// cuts. It stays here rather than using internal/clip: snapshot imports
// nothing of this module, and an outline line wants a fixed width without
// internal/clip's "(N chars)" count, which is for values quoted in errors.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n-1 {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// maxLandmarkName bounds a region's name in a Landmarks line.
const maxLandmarkName = 32

// Landmarks lists a page's regions in one line of at most budget
// characters, for an agent that arrived on a large page: its dialogs first
// (wherever they are: they block the page), then the landmark regions not
// inside another one, in document order, each as role, name and ref (what
// a region snapshot takes). Regions beyond the budget are counted
// ("+3 more"). It is empty when the page has no region with a ref.
func Landmarks(t *Tree, budget int) string {
	var dialogs, top []*Node
	var visit func(nodes []*Node, inRegion bool)
	visit = func(nodes []*Node, inRegion bool) {
		for _, n := range nodes {
			in := inRegion
			if n.Kind == KindElement && landmarkRoles[n.Role] && n.Ref != "" {
				switch {
				case n.Role == "dialog" || n.Role == "alertdialog":
					dialogs = append(dialogs, n)
				case !inRegion:
					top = append(top, n)
				}
				in = true
			}
			visit(n.Children, in)
		}
	}
	visit(t.Roots, false)
	all := append(dialogs, top...)
	var b strings.Builder
	used := 0
	for i, n := range all {
		item := n.Role
		if n.Name != "" {
			item += fmt.Sprintf(" %q", clip(n.Name, maxLandmarkName))
		}
		item += " [ref=" + n.Ref + "]"
		sep := ""
		if i > 0 {
			sep = ", "
		}
		rest := len(all) - i
		// Room for this item and, if more follow, the count of the rest.
		reserve := 0
		if rest > 1 {
			reserve = len(", +99 more")
		}
		if used+len(sep)+utf8.RuneCountInString(item)+reserve > budget {
			fmt.Fprintf(&b, "%s+%d more", sep, rest)
			break
		}
		b.WriteString(sep + item)
		used += len(sep) + utf8.RuneCountInString(item)
	}
	return b.String()
}
