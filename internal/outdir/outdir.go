// Package outdir is where the server's files live: the output directory,
// and in it one directory per principal of an HTTP server with bearer
// tokens (stdio and token-less HTTP sessions share the output directory
// itself, as upstream does). An Area is one caller's directory, reached
// only through an os.Root opened on it: "..", absolute paths elsewhere and
// symlinks that lead out are refused by the root itself, not by a lexical
// check followed by a plain open. A symlink that stays inside is followed
// (os.Root's rule): it cannot reach anything the caller could not name.
//
// Where it sits: tools (screenshots, PDFs, traces, storage state, uploads,
// resources) and session (downloads) open Areas; it imports nothing of
// ours.
package outdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Anonymous is the principal of every HTTP request when no token is
// configured.
const Anonymous = "anonymous"

// DefaultBase is the output directory when none is configured (upstream's).
const DefaultBase = ".playwright-mcp"

// ErrPrincipalName means a principal's name cannot name a directory.
var ErrPrincipalName = errors.New("principal name unusable as a directory name")

// PrincipalDir is the directory of principal's files under base: base itself
// for "" (stdio) and Anonymous, else base/principal. A principal's name must
// be 1 to 64 of [a-z0-9-], not starting with '-', or PrincipalDir fails with
// ErrPrincipalName rather than guess a directory.
func PrincipalDir(base, principal string) (string, error) {
	if principal == "" || principal == Anonymous {
		return base, nil
	}
	if !safePrincipal(principal) {
		if len(principal) > 64 {
			principal = principal[:64] + "…"
		}
		return "", fmt.Errorf("%w: %q", ErrPrincipalName, principal)
	}
	return filepath.Join(base, principal), nil
}

// OpenRoot opens (creating them when missing) base and principal's
// directory in it (PrincipalDir), and returns an os.Root on the latter and
// its absolute path. The principal's directory is reached through base's
// root, so a symlink planted in its place is refused, not followed. The
// caller closes the root. An empty base is DefaultBase.
func OpenRoot(base, principal string) (*os.Root, string, error) {
	if base == "" {
		base = DefaultBase
	}
	dir, err := PrincipalDir(base, principal)
	if err != nil {
		return nil, "", err
	}
	abs, err := filepath.Abs(base)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, "", fmt.Errorf("create the output directory: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, "", fmt.Errorf("open the output directory: %w", err)
	}
	if dir == base {
		return root, abs, nil
	}
	defer root.Close()
	if err := root.Mkdir(principal, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, "", fmt.Errorf("create the directory of %s: %w", principal, err)
	}
	sub, err := root.OpenRoot(principal)
	if err != nil {
		return nil, "", fmt.Errorf("open the directory of %s: %w", principal, err)
	}
	return sub, filepath.Join(abs, principal), nil
}

func safePrincipal(p string) bool {
	if len(p) == 0 || len(p) > 64 || p[0] == '-' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Options say which Area to open and how it behaves.
type Options struct {
	// Base is the output directory. If empty, DefaultBase.
	Base string
	// Principal owns the area ("" for stdio: the output directory itself).
	Principal string
	// Unrestricted (--allow-unrestricted-file-access) allows absolute names
	// anywhere, used as they are; relative names still land in the area.
	Unrestricted bool
	// MaxSize (--output-max-size) bounds the bytes of the area's files:
	// writes evict its oldest files. If zero, no bound.
	MaxSize int64
	// Log hears of evictions. The zero value logs nothing.
	Log zerolog.Logger
}

// Area is one caller's directory: the output directory, or its principal's
// directory in it. Close it when done.
type Area struct {
	o    Options
	root *os.Root
	dir  string // the absolute path of root, as responses show it
	base string // the absolute output directory (dir or its parent)
}

// Open opens the area o names.
func Open(o Options) (*Area, error) {
	if o.Base == "" {
		o.Base = DefaultBase
	}
	root, dir, err := OpenRoot(o.Base, o.Principal)
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	base, _ := filepath.Abs(o.Base)
	return &Area{o: o, root: root, dir: dir, base: base}, nil
}

// Close releases the area's root.
func (a *Area) Close() { _ = a.root.Close() }

// Dir is the area's absolute path.
func (a *Area) Dir() string { return a.dir }

// Root is the os.Root on the area (for listing and stat).
func (a *Area) Root() *os.Root { return a.root }

// Stamped is upstream's name of a file a tool names itself:
// prefix-<ISO time with ':' and '.' made '-'>ext.
func Stamped(prefix, ext string) string {
	stamp := strings.ReplaceAll(time.Now().UTC().Format("2006-01-02T15-04-05.000Z"), ".", "-")
	return fmt.Sprintf("%s-%s%s", prefix, stamp, ext)
}

// Resolve names a file of the area: rel is its name inside the root (empty
// when unrestricted access puts it elsewhere) and path what to show. An
// empty name becomes prefix-<timestamp>ext.
func (a *Area) Resolve(name, prefix, ext string) (rel, path string, err error) {
	if name == "" {
		name = Stamped(prefix, ext)
	}
	if strings.ContainsRune(name, 0) {
		return "", "", fmt.Errorf("file name %s contains a NUL byte", Quote(name))
	}
	rel = name
	if filepath.IsAbs(name) {
		if r, err := filepath.Rel(a.dir, name); err == nil {
			rel = r
		}
	}
	rel = filepath.Clean(rel)
	if !filepath.IsLocal(rel) {
		if a.o.Unrestricted {
			p := name
			if !filepath.IsAbs(p) {
				p = filepath.Join(a.dir, p)
			}
			return "", filepath.Clean(p), nil
		}
		return "", "", fmt.Errorf("file %s is outside the output directory %s; use a relative name", Quote(name), a.dir)
	}
	return rel, filepath.Join(a.dir, rel), nil
}

// refused wraps an error of the root: a name that looked local but leads
// out (a symlink) says so.
func (a *Area) refused(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file %s is not in the output directory %s: %w", Quote(name), a.dir, err)
	}
	return fmt.Errorf("cannot use file %s in the output directory %s: %w (a name, or a symlink, leading outside the output directory is refused)", Quote(name), a.dir, err)
}

// Create creates (or truncates) a file of the area for writing, with its
// parent directories, and returns it with its path.
func (a *Area) Create(name, prefix, ext string) (*os.File, string, error) {
	rel, p, err := a.Resolve(name, prefix, ext)
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

// Write writes data to a file of the area, keeps the area under MaxSize,
// and returns the file's path.
func (a *Area) Write(name, prefix, ext string, data []byte) (string, error) {
	return a.WriteFrom(name, prefix, ext, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom is Write with the content copied by fill.
func (a *Area) WriteFrom(name, prefix, ext string, fill func(io.Writer) error) (string, error) {
	f, p, err := a.Create(name, prefix, ext)
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
	a.Evict(p)
	return p, nil
}

// Append appends data to a file of the area (created when missing, with
// its parent directories), keeps the area under MaxSize, and returns the
// file's path. An append-only log (--save-session) grows through it.
func (a *Area) Append(name string, data []byte) (string, error) {
	rel, p, err := a.Resolve(name, "", "")
	if err != nil {
		return "", err
	}
	if rel == "" {
		return "", fmt.Errorf("file %s is outside the output directory %s; use a relative name", Quote(name), a.dir)
	}
	if d := filepath.Dir(rel); d != "." {
		if err := a.root.MkdirAll(d, 0o755); err != nil {
			return "", a.refused(name, err)
		}
	}
	f, err := a.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return "", a.refused(name, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("append to %s: %w", p, err)
	}
	a.Evict(p)
	return p, nil
}

// Read reads a regular file of the area: a relative name, or an absolute
// path inside the area (anywhere when unrestricted). maxBytes bounds its
// size.
func (a *Area) Read(name string, maxBytes int64) ([]byte, string, error) {
	if name == "" {
		return nil, "", errors.New("filename is empty")
	}
	rel, p, err := a.Resolve(name, "", "")
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
		return nil, "", fmt.Errorf("file %s: %w", Quote(shown), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("file %s: %w", Quote(shown), err)
	}
	if !st.Mode().IsRegular() {
		return nil, "", fmt.Errorf("%s is not a regular file", Quote(shown))
	}
	if st.Size() > maxBytes {
		return nil, "", fmt.Errorf("%s is %d bytes; at most %d are accepted", Quote(shown), st.Size(), maxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", Quote(shown), err)
	}
	if int64(len(b)) > maxBytes {
		return nil, "", fmt.Errorf("%s grew past %d bytes while read", Quote(shown), maxBytes)
	}
	return b, p, nil
}

// ReadInput reads a file an agent hands the page (an upload, a drop): p
// must be absolute; it is read from the area, or, for the shared output
// directory (stdio and token-less HTTP), also from the working directory.
// A principal of its own reads only its own directory: the working
// directory may hold the other principals' ones. Unrestricted reads any
// path.
func (a *Area) ReadInput(p string, maxBytes int64) ([]byte, error) {
	if !filepath.IsAbs(p) {
		return nil, fmt.Errorf("path %s must be absolute", Quote(p))
	}
	p = filepath.Clean(p)
	if a.o.Unrestricted {
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
	return nil, fmt.Errorf("file %s is outside the allowed roots (%s); start the server with --allow-unrestricted-file-access to allow it", Quote(p), roots)
}

// Rename moves a file of the area (from, an absolute path in it) to name,
// which must not exist yet; it returns the new path.
func (a *Area) Rename(from, name, prefix, ext string) (string, error) {
	src, err := filepath.Rel(a.dir, from)
	if err != nil || !filepath.IsLocal(src) {
		return "", fmt.Errorf("%s is not in the output directory %s", from, a.dir)
	}
	rel, p, err := a.Resolve(name, prefix, ext)
	if err != nil {
		return "", err
	}
	if rel == "" {
		return "", fmt.Errorf("file %s is outside the output directory %s; a download is renamed inside it", Quote(name), a.dir)
	}
	if _, err := a.root.Lstat(rel); err == nil {
		return "", fmt.Errorf("%s already exists", Quote(name))
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

// Evict keeps the area under MaxSize bytes: it removes its oldest files (by
// modification time, subdirectories included) until the total fits, never
// keep (the file just written). Each principal's directory is its own
// budget.
func (a *Area) Evict(keep string) {
	max := a.o.MaxSize
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
	for _, f := range files {
		if total <= max {
			break
		}
		if err := a.root.Remove(f.rel); err != nil {
			a.o.Log.Warn().Err(err).Msg("output eviction: cannot remove a file")
			continue
		}
		total -= f.size
		a.o.Log.Debug().Str("file", filepath.Base(f.rel)).Int64("bytes", f.size).Msg("output eviction: removed the oldest file")
	}
}

// Quote quotes s for an error, cut to 100 bytes with its length when longer.
func Quote(s string) string {
	if len(s) <= 100 {
		return fmt.Sprintf("%q", s)
	}
	i := 100
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:i], len(s))
}
