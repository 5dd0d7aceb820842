package main

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// linkRE matches a markdown link target: [Snapshot](path/to/page.yml).
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// linkedFiles returns the local files a response links to, resolved
// against the server's working directory (its workspace root) and output
// directory, keeping only files inside root.
func linkedFiles(text, root string, dirs ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if u, err := url.Parse(target); err == nil && u.Scheme != "" {
			if u.Scheme != "file" {
				continue
			}
			target = u.Path
		}
		var candidates []string
		if filepath.IsAbs(target) {
			candidates = []string{target}
		} else {
			for _, d := range dirs {
				candidates = append(candidates, filepath.Join(d, target))
			}
		}
		for _, c := range candidates {
			c = filepath.Clean(c)
			if rel, err := filepath.Rel(root, c); err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
				if !seen[c] {
					seen[c] = true
					out = append(out, c)
				}
				break
			}
		}
	}
	return out
}

// readLinked reads the files a response links to: an agent that wants to
// see the page after an action must open them.
func readLinked(text, dir, outDir string) (string, []string) {
	files := linkedFiles(text, dir, dir, outDir)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.Write(data)
	}
	return b.String(), files
}

// chars counts what an agent reads, in Unicode characters.
func chars(s string) int { return utf8.RuneCountInString(s) }

// refFor finds the ref of the first element with this role and accessible
// name in an AI snapshot, e.g. `- button "Next" [ref=e12]`.
func refFor(snapshot, role, name string) string {
	re := regexp.MustCompile(`(?m)^\s*- ` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"[^\n]*?\[ref=([A-Za-z0-9_]+)\]`)
	if m := re.FindStringSubmatch(snapshot); m != nil {
		return m[1]
	}
	return ""
}
