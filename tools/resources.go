package tools

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/outdir"
	"github.com/cloakmcp/cloakbrowser-mcp/session"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Files the tools write become MCP resources of the caller's MCP session,
// so a client that does not share the server's disk (Streamable HTTP) can
// read them: a screenshot or snapshot the agent named, and every PDF,
// trace, download and saved storage state. A screenshot without a filename
// is not one: its image is in the answer already, and a resource per
// screenshot would flood resources/list and its list_changed notices.
//
// The resource is registered with the session through Env.Publish
// (pkg/server: a session resource over HTTP, so no other session lists or
// reads it) and read back through an os.Root on its principal's directory,
// so a file swapped for a symlink since is not followed out of it. The
// answer that wrote the file links it (a resource_link after the text).

// FileURIPrefix starts the URI of every file resource; the rest is the
// file's path in the caller's directory, slash-separated and escaped.
// Two principals' files of the same name have the same URI: a URI names
// a file of the caller, never of anyone else.
const FileURIPrefix = "cloakbrowser-mcp://files/"

// MaxResourceBytes bounds one resources/read: the contents travel base64
// inside a single JSON-RPC message that client and server hold in memory.
// A bigger file is refused with an error naming the cap and its path.
const MaxResourceBytes = 16 << 20

// PublishFunc makes res a resource of the MCP session of ctx, announcing it
// with notifications/resources/list_changed.
type PublishFunc func(ctx context.Context, res server.ServerResource)

// fileURI is the resource URI of rel, a local path in a caller's directory.
func fileURI(rel string) string {
	u := url.URL{Scheme: "cloakbrowser-mcp", Host: "files", Path: "/" + filepath.ToSlash(rel)}
	return u.String()
}

// publish makes p, a file this call wrote, a resource of the caller's MCP
// session, and links it in the answer after the text. kind describes it
// ("Screenshot"). A file outside the caller's directory (unrestricted
// file access) is not published: no root could read it back.
func (c *tabCall) publish(p, kind string) {
	c.env.publishFile(c.ctx, c.sess, c.resp, p, kind)
}

// publishFile is publish for a call of sess that answers with resp.
func (env *Env) publishFile(ctx context.Context, sess *session.Session, resp *Response, p, kind string) {
	if env.Publish == nil {
		return
	}
	a, err := env.filesOf(sess)
	if err != nil {
		return
	}
	defer a.Close()
	rel, err := filepath.Rel(a.Dir(), p)
	if err != nil || !filepath.IsLocal(rel) {
		return
	}
	st, err := a.Root().Stat(rel)
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	size := st.Size()
	uri, name, typ := fileURI(rel), filepath.ToSlash(rel), fileMIME(rel)
	desc := kind + " saved by a browser tool"
	if kind == "" {
		desc = "File saved by a browser tool"
	}
	principal := ""
	if sess != nil {
		principal = sess.Principal()
	}
	env.Publish(ctx, server.ServerResource{
		Resource: mcp.Resource{URI: uri, Name: name, Description: desc, MIMEType: typ, Size: &size},
		Handler:  env.fileReader(principal, rel, typ),
	})
	link := mcp.NewResourceLink(uri, name, desc, typ)
	link.Size = &size
	resp.AddLink(link)
}

// fileReader reads rel of principal's directory for resources/read, at
// most MaxResourceBytes, as text when its type is textual and it is UTF-8,
// else as a base64 blob. A file gone since (removed, evicted by
// --output-max-size) fails with an error wrapping fs.ErrNotExist.
func (env *Env) fileReader(principal, rel, typ string) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		uri := fileURI(rel)
		root, dir, err := outdir.OpenRoot(env.OutputDir, principal)
		if err != nil {
			return nil, fmt.Errorf("resource %s: output directory: %w", uri, err)
		}
		defer root.Close()
		shown := env.link(filepath.Join(dir, rel))
		f, err := root.Open(rel)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("resource %s: %s no longer exists (removed, or evicted by --output-max-size): %w", uri, shown, err)
		}
		if err != nil {
			return nil, fmt.Errorf("resource %s: cannot open %s: %w", uri, shown, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", uri, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("resource %s: %s is not a regular file", uri, shown)
		}
		overCap := func(n int64) error {
			return fmt.Errorf("resource %s is %d bytes, over the %d MiB cap of resources/read; read %s on the server's disk, or save a smaller file", uri, n, MaxResourceBytes>>20, shown)
		}
		if st.Size() > MaxResourceBytes {
			return nil, overCap(st.Size())
		}
		data, err := io.ReadAll(io.LimitReader(f, MaxResourceBytes+1))
		if err != nil {
			return nil, fmt.Errorf("resource %s: read %s: %w", uri, shown, err)
		}
		if len(data) > MaxResourceBytes {
			return nil, overCap(int64(len(data)))
		}
		if textual(typ) && utf8.Valid(data) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: typ, Text: string(data)}}, nil
		}
		return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uri, MIMEType: typ, Blob: base64.StdEncoding.EncodeToString(data)}}, nil
	}
}

// fileTypes are the MIME types of what the tools write, fixed here rather
// than taken from the host's mime.types, which differs between machines.
var fileTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
	".pdf": "application/pdf", ".zip": "application/zip", ".json": "application/json",
	".yml": "application/yaml", ".yaml": "application/yaml", ".log": "text/plain", ".txt": "text/plain",
	".csv": "text/csv", ".md": "text/markdown", ".html": "text/html", ".htm": "text/html",
	// Exported tests (browser_export_test); a host's .ts may be MPEG video.
	".ts": "text/x-typescript", ".py": "text/x-python", ".java": "text/x-java", ".cs": "text/x-csharp",
}

// fileMIME is the MIME type of a file by its extension (a download may be
// anything): application/octet-stream when unknown.
func fileMIME(name string) string {
	ext := strings.ToLower(path.Ext(filepath.ToSlash(name)))
	if t, ok := fileTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// textual reports whether a MIME type is text a client reads as such.
func textual(typ string) bool {
	mt, _, err := mime.ParseMediaType(typ)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/yaml", mt == "application/xml", mt == "application/javascript",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	return false
}
