package tools

import (
	"context"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/outdir"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// Files the tools write and read live in the caller's area of the output
// directory (internal/outdir: an os.Root per principal).

// files opens the file area of the caller of ctx.
func (env *Env) files(ctx context.Context) (*outdir.Area, error) {
	sess, err := env.Session(ctx)
	if err != nil {
		return nil, err
	}
	return env.filesOf(sess)
}

// filesOf opens the file area of sess (nil: the shared output directory).
func (env *Env) filesOf(sess *session.Session) (*outdir.Area, error) {
	principal := ""
	if sess != nil {
		principal = sess.Principal()
	}
	return outdir.Open(outdir.Options{
		Base: env.OutputDir, Principal: principal, Unrestricted: env.AllowUnrestrictedFileAccess,
		MaxSize: env.OutputMaxSize, Log: env.Log,
	})
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
		b, err := a.ReadInput(p, maxInputBytes-total)
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

// writeOutput writes data to a named output file of the call's caller and
// returns its path. A file the agent named becomes a resource of its
// session (resources.go); a generated name (a screenshot shown inline)
// does not.
func (c *tabCall) writeOutput(name, prefix, ext string, data []byte) (string, error) {
	return c.writeOutputFrom(name, prefix, ext, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeOutputFrom is writeOutput with the content written by fill.
func (c *tabCall) writeOutputFrom(name, prefix, ext string, fill func(io.Writer) error) (string, error) {
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		return "", err
	}
	defer a.Close()
	p, err := a.WriteFrom(name, prefix, ext, fill)
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
