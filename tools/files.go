package tools

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// outputPath returns where to write a file an agent named (or a generated
// name when empty): inside the output directory, never outside it unless
// unrestricted file access is on.
func (env *Env) outputPath(name, prefix, ext string) (string, error) {
	dir, err := filepath.Abs(env.OutputDir)
	if err != nil {
		return "", err
	}
	if name == "" {
		name = fmt.Sprintf("%s-%s%s", prefix, time.Now().UTC().Format("2006-01-02T15-04-05.000Z"), ext)
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	if !env.AllowUnrestrictedFileAccess && !within(dir, p) {
		return "", fmt.Errorf("file %q is outside the output directory %s; use a relative name", name, dir)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(p), err)
	}
	return p, nil
}

// writeOutput writes data to a named output file and returns its path.
func (env *Env) writeOutput(name, prefix, ext string, data []byte) (string, error) {
	p, err := env.outputPath(name, prefix, ext)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	env.evictOutput(p)
	return p, nil
}

// inputPath checks a file the page should receive (upload, drop): it must
// exist and, unless unrestricted, lie under the working directory or the
// output directory (the workspace roots).
func (env *Env) inputPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("path %q must be absolute", p)
	}
	p = filepath.Clean(p)
	if !env.AllowUnrestrictedFileAccess {
		cwd, _ := os.Getwd()
		out, _ := filepath.Abs(env.OutputDir)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", fmt.Errorf("file %q: %v", p, err)
		}
		if !within(cwd, real) && !within(out, real) {
			return "", fmt.Errorf("file %q is outside the allowed roots (%s, %s); start the server with --allow-unrestricted-file-access to allow it", p, cwd, out)
		}
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("file %q: %v", p, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%q is not a regular file", p)
	}
	return p, nil
}

func within(root, p string) bool {
	if root == "" {
		return false
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
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

// evictOutput keeps the output directory under OutputMaxSize bytes: it
// removes its oldest files (by modification time, subdirectories included)
// until the total fits, never keep (the file just written). A zero
// OutputMaxSize keeps everything.
func (env *Env) evictOutput(keep string) {
	if env.OutputMaxSize <= 0 || env.OutputDir == "" {
		return
	}
	dir, err := filepath.Abs(env.OutputDir)
	if err != nil {
		return
	}
	keep, _ = filepath.Abs(keep)
	type file struct {
		path string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		total += info.Size()
		if p != keep {
			files = append(files, file{p, info.Size(), info.ModTime()})
		}
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	for _, f := range files {
		if total <= env.OutputMaxSize {
			break
		}
		if err := os.Remove(f.path); err != nil {
			env.Log.Warn().Err(err).Msg("output eviction: cannot remove a file")
			continue
		}
		total -= f.size
		env.Log.Debug().Str("file", filepath.Base(f.path)).Int64("bytes", f.size).Msg("output eviction: removed the oldest file")
	}
}
