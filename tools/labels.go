package tools

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// maxLabels bounds the ref labels drawn on one screenshot (as the seed does).
const maxLabels = 150

func labelsTools() []*Tool {
	return []*Tool{
		{Def: optDef("browser_take_labeled_screenshot", "Take a screenshot with ref labels",
			"Take a screenshot with the refs of up to 150 elements drawn on it (interactive elements first), and list each label's box, so you can look at the page and act with the refs (browser_click target=e12).", true,
			props{
				"type":      pEnum("Image format, png (default) or jpeg", "png", "jpeg"),
				"filename":  pStr("File name to save the screenshot to, relative to the output directory. Defaults to `page-{timestamp}.{png|jpeg}`."),
				"fullPage":  pBool("When true, the full scrollable page, instead of the visible viewport"),
				"maxLabels": map[string]any{"type": "integer", "minimum": 1, "maximum": maxLabels, "description": "At most this many labels (default and limit 150)"},
			}),
			Cap: "vision", Handle: tabTool("browser_take_labeled_screenshot", tabOpts{noPage: true}, labeledScreenshot)},
	}
}

// label is one ref with its box (CSS pixels, viewport-relative as the
// snapshot gives it).
type label struct {
	Ref        string
	What       string // role "name"
	X, Y, W, H float64
	rank       int
	order      int
}

var (
	refAttr = regexp.MustCompile(`\[ref=((?:f\d+)?e\d+)\]`)
	boxAttr = regexp.MustCompile(`\[box=(-?[\d.]+),(-?[\d.]+),(-?[\d.]+),(-?[\d.]+)\]`)
)

// parseLabels reads refs and boxes from an AI snapshot taken with boxes.
// Elements inside iframes are left out: their boxes are relative to their
// frame.
func parseLabels(snap string) []label {
	var out []label
	frameIndent := -1 // indentation of the iframe line being skipped
	for _, line := range strings.Split(snap, "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if frameIndent >= 0 {
			if indent > frameIndent {
				continue
			}
			frameIndent = -1
		}
		if strings.HasPrefix(strings.TrimLeft(line, " '"), "- iframe") {
			frameIndent = indent
		}
		rm := refAttr.FindStringSubmatch(line)
		bm := boxAttr.FindStringSubmatch(line)
		if rm == nil || bm == nil {
			continue
		}
		var v [4]float64
		ok := true
		for i := range v {
			f, err := strconv.ParseFloat(bm[i+1], 64)
			if err != nil {
				ok = false
			}
			v[i] = f
		}
		if !ok || v[2] <= 0 || v[3] <= 0 {
			continue
		}
		desc := strings.TrimSpace(line)
		desc = strings.TrimPrefix(desc, "- ")
		desc = strings.TrimPrefix(desc, "'")
		if i := strings.Index(desc, " ["); i >= 0 {
			desc = desc[:i]
		}
		role := desc
		if i := strings.IndexByte(desc, ' '); i >= 0 {
			role = desc[:i]
		}
		rank := map[snapshot.RoleClass]int{snapshot.ClassInteractive: 0, snapshot.ClassContent: 1, snapshot.ClassOther: 2, snapshot.ClassStructural: 3}[snapshot.ClassOf(role)]
		out = append(out, label{Ref: rm[1], What: desc, X: v[0], Y: v[1], W: v[2], H: v[3], rank: rank, order: len(out)})
	}
	return out
}

// pickLabels keeps the labels that show in the picture (all of them for a
// full page), interactive ones first, at most n, back in document order.
func pickLabels(all []label, n int, vw, vh float64, full bool) []label {
	var in []label
	for _, l := range all {
		if full || (l.X+l.W > 0 && l.Y+l.H > 0 && l.X < vw && l.Y < vh) {
			in = append(in, l)
		}
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].rank < in[j].rank })
	if len(in) > n {
		in = in[:n]
	}
	sort.Slice(in, func(i, j int) bool { return in[i].order < in[j].order })
	return in
}

func labeledScreenshot(c *tabCall) error {
	full := c.args.Bool("fullPage", false)
	typ := c.args.String("type", "")
	name := c.args.String("filename", "")
	if typ == "" {
		typ = "png"
		if e := strings.ToLower(filepath.Ext(name)); e == ".jpg" || e == ".jpeg" {
			typ = "jpeg"
		}
	}
	n := int(c.args.Number("maxLabels", maxLabels))
	snap, err := c.tab.AISnapshot(c.ctx, page.SnapshotOptions{Boxes: true})
	if err != nil {
		return fmt.Errorf("snapshot the page: %w", err)
	}
	vw, vh, err := c.tab.InnerSize(c.ctx)
	if err != nil {
		return fmt.Errorf("read the viewport: %w", err)
	}
	labels := pickLabels(parseLabels(snap.Text), n, vw, vh, full)
	boxes := make([]page.Label, len(labels))
	for i, l := range labels {
		boxes[i] = page.Label{Text: l.Ref, X: l.X, Y: l.Y, W: l.W, H: l.H}
	}
	o := page.ScreenshotOptions{Type: "png", FullPage: full}
	if typ == "jpeg" {
		o.Type, o.Quality = "jpeg", 90
	}
	data, sx, sy, err := c.tab.LabeledScreenshot(c.ctx, boxes, o)
	if err != nil {
		return err
	}
	p, err := c.writeOutput(name, "page", "."+typ, data)
	if err != nil {
		return err
	}
	what := "viewport"
	if full {
		what = "full page"
	}
	c.resp.Result("- [Screenshot of %s with %d ref labels](%s)", what, len(labels), c.env.link(p))
	var b strings.Builder
	if full {
		fmt.Fprintf(&b, "Labels (box=x,y,width,height in CSS pixels of the image; the viewport is scrolled by %g,%g):\n", sx, sy)
	} else {
		b.WriteString("Labels (box=x,y,width,height in CSS pixels of the viewport):\n")
	}
	for _, l := range labels {
		x, y := l.X, l.Y
		if full {
			x, y = x+sx, y+sy
		}
		fmt.Fprintf(&b, "- %s %s [box=%g,%g,%g,%g]\n", l.Ref, l.What, x, y, l.W, l.H)
	}
	if len(labels) == 0 {
		b.WriteString("(no element with a ref is visible)\n")
	}
	c.resp.ResultText(b.String())
	if name == "" {
		c.addImage(data, typ, "CSS px, as the label boxes are")
	}
	return nil
}
