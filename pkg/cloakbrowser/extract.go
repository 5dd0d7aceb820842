package cloakbrowser

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// extract unpacks a verified archive into a private staging directory inside
// the cache root, checks it, and renames it to chromium-<ver> in one step, so
// a failure at any point leaves nothing half-installed.
//
// An archive with any unsafe entry (a ".." component, an absolute path, a
// link pointing outside, a write through a link, a device file, a duplicate
// entry) is refused as a whole rather than having the entry skipped (as the
// npm wrapper does): the archive is signed, so such an entry means the
// release or the signing is broken, and a partially unpacked browser is not
// something to launch.
func (r *resolver) extract(ctx context.Context, archive string) error {
	what := fmt.Sprintf("extract %s %s", ArchiveName(r.platform), r.version)
	staging, err := os.MkdirTemp(r.cacheRoot, "."+versionDirName(r.version)+".partial-*")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer os.RemoveAll(staging)

	x := &extractor{root: staging, limits: r.limits}
	if strings.HasSuffix(archive, ".zip") {
		err = x.unzip(ctx, archive)
	} else {
		err = x.untar(ctx, archive)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}

	root := flattenRoot(staging)
	if err := checkLinksInside(root); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	rel := binaryRelPath(r.platform)
	bin := filepath.Join(root, rel)
	if fi, err := os.Lstat(bin); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: archive has no regular file %s", what, filepath.ToSlash(rel))
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return r.moveIntoPlace(root)
}

// moveIntoPlace renames the unpacked tree to chromium-<ver>. If another
// installer got there first with a complete install, that one is kept; an
// incomplete leftover is moved aside and deleted.
func (r *resolver) moveIntoPlace(root string) error {
	dest := r.versionDir()
	var err error
	for range 3 {
		if err = os.Rename(root, dest); err == nil {
			r.logf("CloakBrowser %s installed in %s", r.version, dest)
			return nil
		}
		if r.installedAt(r.version) {
			return nil
		}
		if _, lerr := os.Lstat(dest); lerr != nil {
			break
		}
		stale, serr := os.MkdirTemp(r.cacheRoot, "."+versionDirName(r.version)+".stale-*")
		if serr != nil {
			break
		}
		_ = os.Rename(dest, filepath.Join(stale, "old"))
		_ = os.RemoveAll(stale)
	}
	return fmt.Errorf("install into %s: %w", dest, err)
}

// flattenRoot returns the single top directory of an unpacked archive if
// there is exactly one (and it is not a macOS .app bundle), else the
// staging dir itself.
func flattenRoot(staging string) string {
	ents, err := os.ReadDir(staging)
	if err == nil && len(ents) == 1 && ents[0].IsDir() && !strings.HasSuffix(ents[0].Name(), ".app") {
		return filepath.Join(staging, ents[0].Name())
	}
	return staging
}

// checkLinksInside resolves every symlink under root and refuses the tree if
// one is dangling or ends up outside root. The per-entry lexical check
// cannot see chains (a link to "." followed by a link to "that/..").
func checkLinksInside(root string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("symlink %q is dangling or loops: %w", filepath.ToSlash(rel), ErrUnsafeArchive)
		}
		if !within(realRoot, real) {
			return fmt.Errorf("symlink %q resolves outside the archive: %w", filepath.ToSlash(rel), ErrUnsafeArchive)
		}
		return nil
	})
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// extractor writes archive entries below root, refusing anything unsafe.
type extractor struct {
	root    string
	limits  limits
	written int64
	entries int
}

func unsafeEntry(name, why string) error {
	return fmt.Errorf("entry %q: %s: %w", name, why, ErrUnsafeArchive)
}

// safeRel turns an archive name into a local relative path. It returns ""
// for the archive root ("." or "./").
func safeRel(name string) (string, error) {
	switch {
	case name == "":
		return "", unsafeEntry(name, "empty name")
	case strings.ContainsAny(name, "\\\x00"):
		return "", unsafeEntry(name, "backslash or NUL in name")
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name) || filepath.VolumeName(name) != "" ||
		(len(name) >= 2 && name[1] == ':'):
		return "", unsafeEntry(name, "absolute path")
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", unsafeEntry(name, `".." path component`)
		}
	}
	c := path.Clean(name)
	if c == "." {
		return "", nil
	}
	return filepath.FromSlash(c), nil
}

func (x *extractor) count() error {
	x.entries++
	if x.entries > x.limits.entries {
		return fmt.Errorf("more than %d entries: %w", x.limits.entries, ErrUnsafeArchive)
	}
	return nil
}

// checkParents refuses a path whose existing ancestors include a symlink or
// a non-directory, so no entry is ever written through a link.
func (x *extractor) checkParents(name, rel string) error {
	parts := strings.Split(rel, string(filepath.Separator))
	p := x.root
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return unsafeEntry(name, "path goes through a symlink")
		}
		if !fi.IsDir() {
			return unsafeEntry(name, "parent is not a directory")
		}
	}
	return nil
}

// prepare validates name and creates its parent directories.
func (x *extractor) prepare(name string) (rel, full string, err error) {
	if err := x.count(); err != nil {
		return "", "", err
	}
	rel, err = safeRel(name)
	if err != nil || rel == "" {
		return "", "", err
	}
	if err := x.checkParents(name, rel); err != nil {
		return "", "", err
	}
	full = filepath.Join(x.root, rel)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return "", "", err
	}
	return rel, full, nil
}

func (x *extractor) dir(name string) error {
	rel, full, err := x.prepare(name)
	if err != nil || rel == "" {
		return err
	}
	fi, err := os.Lstat(full)
	if err == nil {
		if fi.IsDir() {
			return nil
		}
		return unsafeEntry(name, "directory over an existing non-directory")
	}
	return os.Mkdir(full, 0o755)
}

func (x *extractor) file(name string, mode int64, r io.Reader) error {
	rel, full, err := x.prepare(name)
	if err != nil {
		return err
	}
	if rel == "" {
		return unsafeEntry(name, "file at the archive root")
	}
	perm := fs.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return unsafeEntry(name, "duplicate entry")
	}
	if err != nil {
		return err
	}
	left := x.limits.extracted - x.written
	n, err := io.Copy(f, io.LimitReader(r, left+1))
	x.written += n
	if err == nil && n > left {
		err = fmt.Errorf("unpacked size exceeds %d bytes: %w", x.limits.extracted, ErrUnsafeArchive)
	}
	if err == nil {
		err = f.Chmod(perm) // the umask may have narrowed it
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q: %w", name, err)
	}
	return nil
}

func (x *extractor) symlink(name, target string) error {
	switch {
	case target == "":
		return unsafeEntry(name, "symlink with an empty target")
	case strings.ContainsAny(target, "\\\x00"):
		return unsafeEntry(name, "backslash or NUL in symlink target")
	case strings.HasPrefix(target, "/") || filepath.IsAbs(target) || filepath.VolumeName(target) != "" ||
		(len(target) >= 2 && target[1] == ':'):
		return unsafeEntry(name, fmt.Sprintf("symlink to absolute path %q", target))
	}
	rel, full, err := x.prepare(name)
	if err != nil {
		return err
	}
	if rel == "" {
		return unsafeEntry(name, "symlink at the archive root")
	}
	resolved := path.Join(path.Dir(filepath.ToSlash(rel)), target)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return unsafeEntry(name, fmt.Sprintf("symlink to %q points outside the archive", target))
	}
	if _, err := os.Lstat(full); err == nil {
		return unsafeEntry(name, "duplicate entry")
	}
	return os.Symlink(target, full)
}

func (x *extractor) hardlink(name, target string) error {
	trel, err := safeRel(target)
	if err != nil {
		return unsafeEntry(name, fmt.Sprintf("hard link to unsafe path %q", target))
	}
	if trel == "" {
		return unsafeEntry(name, "hard link to the archive root")
	}
	if err := x.checkParents(name, trel); err != nil {
		return err
	}
	tfull := filepath.Join(x.root, trel)
	if fi, err := os.Lstat(tfull); err != nil || !fi.Mode().IsRegular() {
		return unsafeEntry(name, fmt.Sprintf("hard link to %q, which is not an extracted regular file", target))
	}
	rel, full, err := x.prepare(name)
	if err != nil {
		return err
	}
	if rel == "" {
		return unsafeEntry(name, "hard link at the archive root")
	}
	if _, err := os.Lstat(full); err == nil {
		return unsafeEntry(name, "duplicate entry")
	}
	return os.Link(tfull, full)
}

func (x *extractor) untar(ctx context.Context, archive string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("read gzip: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, tar.ErrInsecurePath) && hdr != nil {
			return unsafeEntry(hdr.Name, "insecure path")
		}
		if err != nil {
			return fmt.Errorf("read tar: %w", err)
		}
		switch hdr.Typeflag {
		case tar.TypeXGlobalHeader:
			continue
		case tar.TypeDir:
			err = x.dir(hdr.Name)
		case tar.TypeReg:
			err = x.file(hdr.Name, hdr.Mode, tr)
		case tar.TypeSymlink:
			err = x.symlink(hdr.Name, hdr.Linkname)
		case tar.TypeLink:
			err = x.hardlink(hdr.Name, hdr.Linkname)
		default:
			err = unsafeEntry(hdr.Name, fmt.Sprintf("unsupported entry type %q", hdr.Typeflag))
		}
		if err != nil {
			return err
		}
	}
}

// unzip extracts a Windows zip. Zip symlinks are refused: the Windows build
// has none, and Windows could not create them without privileges anyway.
func (x *extractor) unzip(ctx context.Context, archive string) error {
	zr, err := zip.OpenReader(archive)
	if errors.Is(err, zip.ErrInsecurePath) {
		zr.Close()
		return fmt.Errorf("zip has an insecure path: %w", ErrUnsafeArchive)
	}
	if err != nil {
		return fmt.Errorf("read zip: %w", err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		mode := zf.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			err = unsafeEntry(zf.Name, "symlink in a zip archive")
		case mode.IsDir():
			err = x.dir(zf.Name)
		case mode.IsRegular():
			var rc io.ReadCloser
			if rc, err = zf.Open(); err == nil {
				err = x.file(zf.Name, int64(mode.Perm()), rc)
				rc.Close()
			}
		default:
			err = unsafeEntry(zf.Name, fmt.Sprintf("unsupported file mode %s", mode))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
