package snapshot

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// SearchOptions bound a Search.
type SearchOptions struct {
	// Max is the most matches listed. If zero, 20.
	Max int
	// Budget is the most characters the listing may take. If zero, 4000.
	Budget int
}

// Matcher says whether a line of a snapshot matches, and how well its
// accessible name does: exact (the whole name), or at all.
type Matcher interface {
	Line(line string) bool
	Name(name string) (exact, ok bool)
}

// TextMatcher matches a case-insensitive substring.
type TextMatcher string

// Line reports whether line contains the text, ignoring case.
func (m TextMatcher) Line(line string) bool {
	return strings.Contains(strings.ToLower(line), strings.ToLower(string(m)))
}

// Name reports an exact (case-insensitive, trimmed) or partial name match.
func (m TextMatcher) Name(name string) (exact, ok bool) {
	n, q := strings.ToLower(strings.TrimSpace(name)), strings.ToLower(strings.TrimSpace(string(m)))
	return n == q, strings.Contains(n, q)
}

// RegexMatcher matches a regular expression.
type RegexMatcher struct{ *regexp.Regexp }

// Line reports whether the expression matches the line.
func (m RegexMatcher) Line(line string) bool { return m.MatchString(line) }

// Name reports whether the expression matches the whole name, or a part.
func (m RegexMatcher) Name(name string) (exact, ok bool) {
	loc := m.FindStringIndex(name)
	if loc == nil {
		return false, false
	}
	return loc[0] == 0 && loc[1] == len(name), true
}

// Match is one node Search found.
type Match struct {
	Node *Node
	// Path holds the node's ancestors that give context (landmarks and named
	// elements), outermost first.
	Path []*Node
	// Row is the table row the node is in, if any: a matching cell is shown
	// with its row's cells, where the value an agent looks for usually is.
	Row *Node
	// Rank orders matches: 0 exact name, 1 name, 2 anything else on the
	// line (a value, a URL, the role); an interactive node gets the better
	// half of its rank.
	Rank  int
	order int
}

// SearchResult is what Search found.
type SearchResult struct {
	Matches []Match // ranked, at most Max
	Total   int     // all matches, listed or not
}

// Search finds the nodes whose line (as Render prints it, property lines
// included) matches m, ranked: an exact accessible name first, then a name
// that contains the match, then the rest; interactive elements before
// others of the same rank; then document order; matches of a role and
// name already listed twice after all the others. A match inside another
// match of the same or better rank is left out (the outer one shows it).
func Search(t *Tree, m Matcher, o SearchOptions) SearchResult {
	max := o.Max
	if max <= 0 {
		max = 20
	}
	var all []Match
	var path []*Node
	order := 0
	var visit func(nodes []*Node, coveredRank int)
	visit = func(nodes []*Node, coveredRank int) {
		for _, n := range nodes {
			order++
			rank, ok := rankNode(n, m)
			covered := coveredRank
			if ok && rank < coveredRank {
				all = append(all, Match{Node: n, Path: contextPath(path), Row: rowOf(n, path), Rank: rank, order: order})
				covered = rank
			}
			path = append(path, n)
			visit(n.Children, covered)
			path = path[:len(path)-1]
		}
	}
	visit(t.Roots, 1<<30)
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Rank != all[j].Rank {
			return all[i].Rank < all[j].Rank
		}
		return all[i].order < all[j].order
	})
	// A text line that repeats the name of a matching element (a label
	// next to its field) adds nothing.
	names := map[string]bool{}
	for _, m := range all {
		if m.Node.Kind == KindElement && m.Node.Name != "" {
			names[strings.ToLower(m.Node.Name)] = true
		}
	}
	kept := all[:0]
	for _, m := range all {
		if m.Node.Kind == KindText && names[strings.ToLower(strings.TrimSpace(m.Node.Text))] {
			continue
		}
		kept = append(kept, m)
	}
	all = demoteRepeats(kept)
	res := SearchResult{Total: len(all)}
	if len(all) > max {
		all = all[:max]
	}
	res.Matches = all
	return res
}

// maxRepeats is how many matches of one role and name keep their rank.
const maxRepeats = 2

// demoteRepeats moves the matches beyond the first maxRepeats of each
// role and name (a status cell "Overdue" in every row) after the others,
// in order: a page's one button whose name holds the words is listed, not
// pushed out by forty equal cells.
func demoteRepeats(all []Match) []Match {
	seen := map[string]int{}
	var first, rest []Match
	for _, m := range all {
		key := m.Node.Role + "\x00" + strings.ToLower(m.Node.Name)
		if m.Node.Kind == KindText {
			key = "\x00text\x00" + strings.ToLower(strings.TrimSpace(m.Node.Text))
		}
		if seen[key]++; seen[key] > maxRepeats {
			rest = append(rest, m)
			continue
		}
		first = append(first, m)
	}
	return append(first, rest...)
}

func rankNode(n *Node, m Matcher) (int, bool) {
	line := string(appendLine(nil, n, lineOpts{noColon: true}))
	ok := m.Line(line)
	for _, p := range n.Props {
		if ok {
			break
		}
		ok = m.Line(string(appendProp(nil, p)))
	}
	if !ok {
		return 0, false
	}
	rank := 4
	if n.Kind == KindElement && n.Name != "" {
		if exact, in := m.Name(n.Name); exact {
			rank = 0
		} else if in {
			rank = 2
		}
	}
	if !isInteractive(n) {
		rank++
	}
	return rank, true
}

// rowOf returns n if it is a row, else its nearest row ancestor.
func rowOf(n *Node, path []*Node) *Node {
	if n.Role == "row" {
		return n
	}
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Role == "row" {
			return path[i]
		}
	}
	return nil
}

// rowCells renders a row's cells as "a | b | c", cut at 200 characters.
func rowCells(row *Node) string {
	var cells []string
	for _, c := range row.Children {
		v := c.Name
		if v == "" {
			v = c.Text
		}
		if v == "" && len(c.Children) == 1 {
			v = c.Children[0].Name
		}
		cells = append(cells, v)
	}
	return clip(strings.Join(cells, " | "), 200)
}

// contextPath keeps the ancestors worth naming: landmarks, and elements
// with a name other than unnamed structure.
func contextPath(path []*Node) []*Node {
	var out []*Node
	for _, a := range path {
		if a.Kind != KindElement {
			continue
		}
		if landmarkRoles[a.Role] || a.Name != "" || a.Role == "table" {
			out = append(out, a)
		}
	}
	if len(out) > 4 {
		out = out[len(out)-4:]
	}
	return out
}

// RenderMatches prints matches one per line, each followed by its context:
//
//   - link "Pricing" [ref=e41] /pricing — in navigation "Main"
//
// within budget characters (0 means 4000); the last line says how many
// were left out.
func RenderMatches(r SearchResult, budget int) string {
	if budget <= 0 {
		budget = 4000
	}
	var b strings.Builder
	shown := 0
	var prevRow *Node
	prevPath := ""
	for _, m := range r.Matches {
		l := shortLine(m.Node)
		if m.Node.Kind == KindElement {
			for _, p := range m.Node.Props {
				if p.Name == "url" {
					l += " " + clip(p.Value, 80)
				}
			}
		}
		// A row or a context already printed on the line before is not
		// repeated.
		if m.Row != nil && m.Row != prevRow && m.Row.Name == "" && len(m.Row.Children) > 0 {
			l += " — row: " + rowCells(m.Row)
		}
		prevRow = m.Row
		ctx := ""
		if len(m.Path) > 0 {
			parts := make([]string, len(m.Path))
			for i, a := range m.Path {
				parts[i] = a.Role
				if a.Name != "" {
					parts[i] += " " + string(appendJSONString(nil, clip(a.Name, 100)))
				}
				if a.Ref != "" && i == len(m.Path)-1 {
					parts[i] += " [ref=" + a.Ref + "]"
				}
			}
			ctx = " — in " + strings.Join(parts, " > ")
		}
		if ctx != prevPath {
			l += ctx
		}
		prevPath = ctx
		if b.Len() > 0 && utf8.RuneCountInString(b.String())+1+utf8.RuneCountInString(l) > budget {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
		shown++
	}
	if more := r.Total - shown; more > 0 {
		fmt.Fprintf(&b, "\n- … %d more matches not shown: refine the search", more)
	}
	return b.String()
}
