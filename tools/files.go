package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// Files the tools write and read. Every file under the output directory is
// reached through an os.Root opened on the caller's directory (a fileArea),
// so "..", absolute paths elsewhere and symlinks that lead out of it are
// refused by the root itself, not by a lexical check followed by a plain
// open. A symlink that stays inside the directory is followed (os.Root's
// rule): it cannot reach anything the caller could not name directly.
//
// With --allow-unrestricted-file-access, absolute names anywhere are
// allowed and used as they are (no confinement); relative names still land
// in the caller's directory.

// fileArea is where one call's files live: the output directory, or, for a
// principal of an HTTP server with bearer tokens, its own directory in it
// (session.PrincipalDir). It holds an os.Root on that directory; Close it
// when done. Resources (listing a caller's files) reuse it.
type fileArea struct {
	env  *Env
	root *os.Root
	// dir is the absolute path of root, as responses show it.
	dir string
	// base is the absolute output directory (dir or its parent).
	base string
}

// files opens the file area of the caller of ctx.
func (env *Env) files(ctx context.Context) (*fileArea, error) {
	sess, err := env.Session(ctx)
	if err != nil {
		return nil, err
	}
	return env.filesOf(sess)
}

// filesOf opens the file area of sess (nil: the shared output directory).
func (env *Env) filesOf(sess *session.Session) (*fileArea, error) {
	principal := ""
	if sess != nil {
		principal = sess.Principal()
	}
	root, dir, err := session.OpenPrincipalRoot(env.outputDir(), principal)
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	base, _ := filepath.Abs(env.outputDir())
	return &fileArea{env: env, root: root, dir: dir, base: base}, nil
}

func (env *Env) outputDir() string {
	if env.OutputDir == "" {
		return ".playwright-mcp"
	}
	return env.OutputDir
}

// Close releases the area's root.
func (a *fileArea) Close() { _ = a.root.Close() }

// resolve names a file of the area: rel is its name inside the root (empty
// when unrestricted access puts it elsewhere) and path what to show. An
// empty name becomes prefix-<timestamp>ext.
func (a *fileArea) resolve(name, prefix, ext string) (rel, path string, err error) {
	if name == "" {
		name = fmt.Sprintf("%s-%s%s", prefix, time.Now().UTC().Format("2006-01-02T15-04-05.000Z"), ext)
	}
	if strings.ContainsRune(name, 0) {
		return "", "", fmt.Errorf("file name %s contains a NUL byte", quoteShort(name))
	}
	rel = name
	if filepath.IsAbs(name) {
		if r, err := filepath.Rel(a.dir, name); err == nil {
			rel = r
		}
	}
	rel = filepath.Clean(rel)
	if !filepath.IsLocal(rel) {
		if a.env.AllowUnrestrictedFileAccess {
			p := name
			if !filepath.IsAbs(p) {
				p = filepath.Join(a.dir, p)
			}
			return "", filepath.Clean(p), nil
		}
		return "", "", fmt.Errorf("file %s is outside the output directory %s; use a relative name", quoteShort(name), a.dir)
	}
	return rel, filepath.Join(a.dir, rel), nil
}

// refused wraps an error of the root: a name that looked local but leads
// out (a symlink) says so.
func (a *fileArea) refused(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file %s is not in the output directory %s: %w", quoteShort(name), a.dir, err)
	}
	return fmt.Errorf("cannot use file %s in the output directory %s: %w (a name, or a symlink, leading outside the output directory is refused)", quoteShort(name), a.dir, err)
}

// create creates (or truncates) a file of the area for writing, with its
// parent directories, and returns it with its path.
func (a *fileArea) create(name, prefix, ext string) (*os.File, string, error) {
	rel, p, err := a.resolve(name, prefix, ext)
	if err != nil {
		return nil, "", err
	}
	if rel == "" { // unrestricted, outside the area
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, "", fmt.Errorf("create %s: %w", filepath.Dir(p), err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		return f, p, err
	}
	if d := filepath.Dir(rel); d != "." {
		if err := a.root.MkdirAll(d, 0o755); err != nil {
			return nil, "", a.refused(name, err)
		}
	}
	f, err := a.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, "", a.refused(name, err)
	}
	return f, p, nil
}

// write writes data to a file of the area, keeps the area under
// --output-max-size, and returns the file's path.
func (a *fileArea) write(name, prefix, ext string, data []byte) (string, error) {
	return a.writeFrom(name, prefix, ext, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeFrom is write with the content copied by fill.
func (a *fileArea) writeFrom(name, prefix, ext string, fill func(io.Writer) error) (string, error) {
	f, p, err := a.create(name, prefix, ext)
	if err != nil {
		return "", err
	}
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	a.evict(p)
	return p, nil
}

// open opens a regular file of the area for reading: a relative name, or an
// absolute path inside the area. maxBytes bounds its size.
func (a *fileArea) read(name string, maxBytes int64) ([]byte, string, error) {
	if name == "" {
		return nil, "", errors.New("filename is empty")
	}
	rel, p, err := a.resolve(name, "", "")
	if err != nil {
		return nil, "", err
	}
	if rel == "" {
		return readFile(nil, p, name, maxBytes)
	}
	b, _, err := readFile(a.root, rel, name, maxBytes)
	if err != nil {
		return nil, "", a.refused(name, err)
	}
	return b, p, nil
}

// readFile reads a regular file through root (or directly when root is
// nil), at most maxBytes.
func readFile(root *os.Root, p, shown string, maxBytes int64) ([]byte, string, error) {
	var f *os.File
	var err error
	if root != nil {
		f, err = root.Open(p)
	} else {
		f, err = os.Open(p)
	}
	if err != nil {
		return nil, "", fmt.Errorf("file %s: %w", quoteShort(shown), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("file %s: %w", quoteShort(shown), err)
	}
	if !st.Mode().IsRegular() {
		return nil, "", fmt.Errorf("%s is not a regular file", quoteShort(shown))
	}
	if st.Size() > maxBytes {
		return nil, "", fmt.Errorf("%s is %d bytes; at most %d are accepted", quoteShort(shown), st.Size(), maxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", quoteShort(shown), err)
	}
	if int64(len(b)) > maxBytes {
		return nil, "", fmt.Errorf("%s grew past %d bytes while read", quoteShort(shown), maxBytes)
	}
	return b, p, nil
}

// rename moves a file of the area (from, an absolute path in it) to name,
// which must not exist yet; it returns the new path.
func (a *fileArea) rename(from, name, prefix, ext string) (string, error) {
	src, err := filepath.Rel(a.dir, from)
	if err != nil || !filepath.IsLocal(src) {
		return "", fmt.Errorf("%s is not in the output directory %s", from, a.dir)
	}
	rel, p, err := a.resolve(name, prefix, ext)
	if err != nil {
		return "", err
	}
	if rel == "" {
		return "", fmt.Errorf("file %s is outside the output directory %s; a download is renamed inside it", quoteShort(name), a.dir)
	}
	if _, err := a.root.Lstat(rel); err == nil {
		return "", fmt.Errorf("%s already exists", quoteShort(name))
	}
	if d := filepath.Dir(rel); d != "." {
		if err := a.root.MkdirAll(d, 0o755); err != nil {
			return "", a.refused(name, err)
		}
	}
	if err := a.root.Rename(src, rel); err != nil {
		return "", a.refused(name, err)
	}
	return p, nil
}

// maxInputBytes bounds the files of one upload or drop.
const maxInputBytes = page.MaxInputFileBytes

// inputFiles reads the files an agent hands the page (upload, drop) from
// the allowed roots: the caller's own directory and, for stdio and
// token-less HTTP, the working directory. Paths must be absolute. A file in
// another principal's directory is never readable. With unrestricted file
// access any path is read. The page gets the bytes read here, so a path
// swapped after the check cannot change what it receives.
func (c *tabCall) inputFiles(paths []string) ([]page.InputFile, error) {
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	out := make([]page.InputFile, 0, len(paths))
	var total int64
	for _, p := range paths {
		b, err := a.readInput(p, maxInputBytes-total)
		if err != nil {
			return nil, err
		}
		total += int64(len(b))
		typ := mime.TypeByExtension(filepath.Ext(p))
		if typ == "" {
			typ = "application/octet-stream"
		}
		out = append(out, page.InputFile{Name: filepath.Base(p), MimeType: typ, Data: b})
	}
	return out, nil
}

// readInput reads one input file (see inputFiles).
func (a *fileArea) readInput(p string, maxBytes int64) ([]byte, error) {
	if !filepath.IsAbs(p) {
		return nil, fmt.Errorf("path %s must be absolute", quoteShort(p))
	}
	p = filepath.Clean(p)
	if a.env.AllowUnrestrictedFileAccess {
		b, _, err := readFile(nil, p, p, maxBytes)
		return b, err
	}
	if rel, err := filepath.Rel(a.dir, p); err == nil && filepath.IsLocal(rel) {
		b, _, err := readFile(a.root, rel, p, maxBytes)
		if err != nil {
			return nil, a.refused(p, err)
		}
		return b, nil
	}
	roots := a.dir
	if a.dir == a.base {
		cwd, err := os.Getwd()
		if err == nil {
			if rel, err := filepath.Rel(cwd, p); err == nil && filepath.IsLocal(rel) {
				root, err := os.OpenRoot(cwd)
				if err != nil {
					return nil, err
				}
				defer root.Close()
				b, _, err := readFile(root, rel, p, maxBytes)
				if err != nil {
					return nil, fmt.Errorf("%w (files must stay inside %s or %s; a symlink leading out is refused)", err, cwd, a.dir)
				}
				return b, nil
			}
			roots = cwd + ", " + a.dir
		}
	}
	// A principal of its own (bearer tokens) reads only its own directory:
	// the working directory may hold the other principals' ones.
	return nil, fmt.Errorf("file %s is outside the allowed roots (%s); start the server with --allow-unrestricted-file-access to allow it", quoteShort(p), roots)
}

// quoteShort quotes s, cut to 100 bytes with its length when longer.
func quoteShort(s string) string {
	if len(s) <= 100 {
		return fmt.Sprintf("%q", s)
	}
	i := 100
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:i], len(s))
}

// writeOutput writes data to a named output file of the call's caller and
// returns its path. A file the agent named becomes a resource of its
// session (resources.go); a generated name (a screenshot shown inline)
// does not.
func (c *tabCall) writeOutput(name, prefix, ext string, data []byte) (string, error) {
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		return "", err
	}
	defer a.Close()
	p, err := a.write(name, prefix, ext, data)
	if err == nil && name != "" {
		c.publish(p, outputKind(prefix, ext))
	}
	return p, err
}

// outputKind describes a writeOutput file for its resource.
func outputKind(prefix, ext string) string {
	switch prefix {
	case "page":
		if ext == ".yml" {
			return "Page snapshot"
		}
		return "Screenshot"
	case "console":
		return "Console messages"
	case "network":
		return "Network requests"
	case "request":
		return "Network request"
	case "evaluate":
		return "Evaluation result"
	case "find":
		return "Find results"
	}
	return ""
}

// link renders a path for a response: with FilePaths "absolute" the
// absolute path; otherwise relative to the working directory when inside
// it, like upstream's links.
func (env *Env) link(p string) string {
	if env.FilePaths == "absolute" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return "./" + rel
		}
	}
	return p
}

// evictOutput keeps the shared output directory under OutputMaxSize (see
// fileArea.evict); keep is the file just written.
func (env *Env) evictOutput(keep string) {
	if env.OutputMaxSize <= 0 {
		return
	}
	a, err := env.filesOf(nil)
	if err != nil {
		return
	}
	defer a.Close()
	a.evict(keep)
}

// evict keeps the area under OutputMaxSize bytes: it removes its oldest
// files (by modification time, subdirectories included) until the total
// fits, never keep (the file just written). A zero OutputMaxSize keeps
// everything. Each principal's directory is its own budget.
func (a *fileArea) evict(keep string) {
	max := a.env.OutputMaxSize
	if max <= 0 {
		return
	}
	keepRel, err := filepath.Rel(a.dir, keep)
	if err != nil {
		keepRel = ""
	}
	type file struct {
		rel  string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	_ = fs.WalkDir(a.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		total += info.Size()
		if rel := filepath.FromSlash(p); rel != keepRel {
			files = append(files, file{rel, info.Size(), info.ModTime()})
		}
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	log := a.env.Log
	for _, f := range files {
		if total <= max {
			break
		}
		if err := a.root.Remove(f.rel); err != nil {
			log.Warn().Err(err).Msg("output eviction: cannot remove a file")
			continue
		}
		total -= f.size
		log.Debug().Str("file", filepath.Base(f.rel)).Int64("bytes", f.size).Msg("output eviction: removed the oldest file")
	}
}
