package session

import (
	"github.com/cloakmcp/cloakbrowser-mcp/internal/outdir"
)

// Where a session's files live. Every principal of an HTTP server with
// bearer tokens has a directory of its own under the output directory;
// stdio and token-less HTTP sessions share the output directory itself, as
// upstream does.

// Anonymous is the principal of every HTTP request when no token is
// configured.
const Anonymous = outdir.Anonymous

// Principal names who owns the session (a name derived from its bearer
// token, or Anonymous), or "" for a stdio session.
func (s *Session) Principal() string { return s.principal }

// OutputDir is where the session's files go: Config.OutputDir, or its
// principal's directory in it (outdir.PrincipalDir). It is empty when
// Config has no output directory.
func (s *Session) OutputDir() (string, error) {
	if s.cfg.OutputDir == "" {
		return "", nil
	}
	return outdir.PrincipalDir(s.cfg.OutputDir, s.principal)
}
