package cdpproxy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// FilePolicy is what CDP clients may make the browser read from or write to
// the local disk: the rules agents obey (--allow-unrestricted-file-access),
// enforced on what the proxy relays from client to browser. The zero value
// refuses file: URLs, every file path given to a page and every download
// directory.
type FilePolicy struct {
	// Unrestricted turns the file checks off (--allow-unrestricted-file-access):
	// file: URLs, any file given to a page, any download directory. The
	// method allowlist and the target rules still apply.
	Unrestricted bool

	// InputRoots are directories, besides OutputDir, whose files a page may
	// receive (DOM.setFileInputFiles, Input.dispatchDragEvent). Absolute
	// paths. If empty, only OutputDir's files.
	InputRoots []string

	// OutputDir is the caller's own directory: the only one (subdirectories
	// included) downloads may be sent to (Browser.setDownloadBehavior,
	// Page.setDownloadBehavior), and an input root. An absolute path. If
	// empty, downloads can only be denied.
	OutputDir string
}

func (f FilePolicy) validate() error {
	for _, r := range f.InputRoots {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("cdpproxy: FilePolicy.InputRoots entry %q is not an absolute path", r)
		}
	}
	if f.OutputDir != "" && !filepath.IsAbs(f.OutputDir) {
		return fmt.Errorf("cdpproxy: FilePolicy.OutputDir %q is not an absolute path", f.OutputDir)
	}
	return nil
}

// Policy sentences sent to CDP clients in refusals.
const (
	policyHint     = "start it with --allow-unrestricted-file-access to allow them"
	msgFileURL     = "file: URLs are refused by this server's file policy; " + policyHint
	allowedSchemes = "http, https, data or about:blank"
)

// fileGuard is a compiled FilePolicy; nil means unrestricted.
type fileGuard struct {
	inputRoots []string // resolved (symlinks evaluated where they exist)
	outputDir  string   // resolved; "" if none
}

func newFileGuard(f FilePolicy) *fileGuard {
	if f.Unrestricted {
		return nil
	}
	g := &fileGuard{}
	for _, r := range f.InputRoots {
		g.inputRoots = append(g.inputRoots, resolvePath(r))
	}
	if f.OutputDir != "" {
		g.outputDir = resolvePath(f.OutputDir)
		g.inputRoots = append(g.inputRoots, g.outputDir)
	}
	return g
}

// quote quotes at most ~100 bytes of s, with its length when cut.
func quote(s string) string {
	const max = 100
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !validCut(s, cut) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

func validCut(s string, i int) bool { return i >= len(s) || s[i]&0xC0 != 0x80 }

// checkURL applies the agents' navigation rules to a URL a CDP client asks
// the browser to load: http, https and data URLs pass, and about:blank,
// about:srcdoc and the empty URL (about:blank). file: and every other scheme
// are refused, chrome: included: WebUI pages have privileged bindings (the
// download directory, opening downloaded files) that Runtime.evaluate could
// drive, and Chromium rewrites other about: URLs to chrome: ones.
// The scheme is read the way Chromium's URL parser reads it: leading and
// trailing control characters and spaces are dropped and tabs and line
// breaks removed anywhere, so " fi\tle:///" is a file: URL here too.
func checkURL(raw string) error {
	s := cleanURL(raw)
	if s == "" {
		return nil
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 || !validScheme(s[:i]) {
		return fmt.Errorf("URL %s is not an absolute URL: use %s URLs", quote(raw), allowedSchemes)
	}
	switch scheme := strings.ToLower(s[:i]); scheme {
	case "http", "https", "data":
		return nil
	case "about":
		page, _, _ := strings.Cut(strings.ToLower(s[i+1:]), "#")
		page, _, _ = strings.Cut(page, "?")
		if page == "blank" || page == "srcdoc" {
			return nil
		}
		return fmt.Errorf("URL %s is refused by this server's file policy: use %s URLs", quote(raw), allowedSchemes)
	case "file":
		return errors.New(msgFileURL)
	default:
		return fmt.Errorf("%s: URLs are refused by this server's file policy: use %s URLs", quote(scheme), allowedSchemes)
	}
}

// validScheme is RFC 3986's scheme syntax.
func validScheme(s string) bool {
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// checkInputFile refuses a file a page would receive unless it lies inside
// an input root once symlinks are resolved.
func (g *fileGuard) checkInputFile(p string) error {
	if len(g.inputRoots) == 0 {
		return errors.New("files given to pages are refused by this server's file policy (this session has no directory); " + policyHint)
	}
	if filepath.IsAbs(p) {
		real := resolvePath(p)
		for _, root := range g.inputRoots {
			if within(root, real) {
				return nil
			}
		}
	}
	return fmt.Errorf("file %s is outside this session's directory, so this server's file policy refuses it; "+
		"pass an absolute path inside %s, or start the server with --allow-unrestricted-file-access", quote(p), g.rootsText())
}

// checkDownload refuses a download behaviour that would write outside the
// output directory: "deny" always passes; "allow" and "allowAndName" need a
// downloadPath inside it; "default" (the browser's own directory) is refused.
func (g *fileGuard) checkDownload(behavior, path string) error {
	if behavior == "deny" {
		return nil
	}
	if g.outputDir == "" {
		return errors.New("downloads are refused by this server's file policy (no output directory); use behavior \"deny\", " +
			"or start the server with --allow-unrestricted-file-access")
	}
	if path != "" && filepath.IsAbs(path) && within(g.outputDir, resolvePath(path)) {
		return nil
	}
	return fmt.Errorf("downloads may only go to this session's directory under this server's file policy: pass a downloadPath inside %s "+
		"(got %s; Playwright's connectOverCDP: set artifactsDir to it), or start the server with --allow-unrestricted-file-access",
		quote(g.outputDir), quote(path))
}

// rootsText names the input roots for a refusal.
func (g *fileGuard) rootsText() string {
	q := make([]string, len(g.inputRoots))
	for i, r := range g.inputRoots {
		q[i] = quote(r)
	}
	return strings.Join(q, " or ")
}

// resolvePath is p made absolute and clean, with symlinks evaluated in its
// longest existing prefix (a directory that does not exist yet cannot hold one).
func resolvePath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for dir := p; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// unescapeQuery percent-decodes every valid %XX of s and keeps the rest, as
// Chromium does with the query of /json/new before parsing it as a URL.
func unescapeQuery(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
