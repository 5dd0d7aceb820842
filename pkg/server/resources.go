package server

import (
	"context"
	"errors"
	"io/fs"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// MCP resources: the files tools write (tools/resources.go builds each
// resource and reads it back through its principal's os.Root; this file
// decides whose it is).
//
// Over Streamable HTTP a file is a session resource of the MCP session that
// wrote it (mcp-go's AddSessionResources): only that session lists and
// reads it, and notifications/resources/list_changed goes to it alone.
// Another session, of the same principal or another, asking for its URI
// gets "resource not found" from mcp-go's lookup, never the contents; so
// does any URI no tool published (traversal, "%2e%2e", absolute paths):
// URIs are looked up, never turned into paths. Over stdio there is one
// client, and mcp-go's stdio session keeps no resources of its own: the
// file is a server resource.

// publishResource makes res, a file a tool wrote in the call of ctx, a
// resource of that call's MCP session (tools.Env.Publish). A read that
// finds the file gone (removed, evicted by --output-max-size) also drops
// it from the list.
func (s *Server) publishResource(ctx context.Context, res server.ServerResource) {
	uri := res.Resource.URI
	read := res.Handler
	cs := server.ClientSessionFromContext(ctx)
	if s.transport() == nil {
		res.Handler = func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			out, err := read(ctx, req)
			if errors.Is(err, fs.ErrNotExist) {
				s.mcp.DeleteResources(uri)
			}
			return out, err
		}
		s.mcp.AddResources(res)
		return
	}
	if cs == nil || cs.SessionID() == "" {
		// No session to hold it (not reachable today: tools that write
		// files need a browser session, hence an MCP session).
		s.log.Debug().Str("resource", uri).Msg("resource not published: the call has no MCP session")
		return
	}
	id := cs.SessionID()
	res.Handler = func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		out, err := read(ctx, req)
		if errors.Is(err, fs.ErrNotExist) {
			_ = s.mcp.DeleteSessionResources(id, uri)
		}
		return out, err
	}
	if err := s.mcp.AddSessionResources(id, res); err != nil {
		s.log.Warn().Err(err).Str("session", id).Str("resource", uri).Msg("resource not published")
		return
	}
	s.log.Debug().Str("session", id).Str("resource", uri).Msg("resource published")
}

// shortUnknownURIs keeps resources/read's "not found" error short: mcp-go
// quotes the URI it could not find whole ("handler not found for resource
// URI '%s'"), so a 100,000-character URI came back as a 100,100-character
// error. A URI longer than clip.Max that names no resource of the caller's
// session or of the server is replaced, before mcp-go looks it up, by its
// clipped form (its first clip.Max characters, "…" and its length), which
// names nothing either: the answer stays mcp-go's own "resource not found"
// (the same JSON-RPC code), quoting at most clip.Max characters. mcp-go
// hands the hook the request it then looks up (server/request_handler.go).
func (s *Server) shortUnknownURIs(hooks *server.Hooks) {
	hooks.AddBeforeReadResource(func(ctx context.Context, _ any, req *mcp.ReadResourceRequest) {
		uri := req.Params.URI
		if short := clip.Short(uri); short != uri && !s.knownResource(ctx, uri) {
			req.Params.URI = short
		}
	})
}

// knownResource reports whether uri is a resource of the MCP session of ctx
// or of the server.
func (s *Server) knownResource(ctx context.Context, uri string) bool {
	if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithResources); ok {
		if _, ok := cs.GetSessionResources()[uri]; ok {
			return true
		}
	}
	_, ok := s.mcp.ListResources()[uri]
	return ok
}
