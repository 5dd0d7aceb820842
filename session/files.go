package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Where a session's files live. Every principal of an HTTP server with
// bearer tokens has a directory of its own under the output directory;
// stdio and token-less HTTP sessions share the output directory itself, as
// upstream does.

// Anonymous is the principal of every HTTP request when no token is
// configured.
const Anonymous = "anonymous"

// ErrPrincipalName means a principal's name cannot name a directory.
var ErrPrincipalName = errors.New("principal name unusable as a directory name")

// Principal names who owns the session (a name derived from its bearer
// token, or Anonymous), or "" for a stdio session.
func (s *Session) Principal() string { return s.principal }

// OutputDir is where the session's files go: Config.OutputDir, or its
// principal's directory in it (PrincipalDir). It is empty when Config has
// no output directory.
func (s *Session) OutputDir() (string, error) {
	if s.cfg.OutputDir == "" {
		return "", nil
	}
	return PrincipalDir(s.cfg.OutputDir, s.principal)
}

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

// OpenPrincipalRoot opens (creating them when missing) base and
// principal's directory in it (PrincipalDir), and returns an os.Root on the
// latter and its path. The principal's directory is reached through base's
// root, so a symlink planted in its place is refused, not followed; a
// relative base is made absolute. The caller closes the root.
func OpenPrincipalRoot(base, principal string) (*os.Root, string, error) {
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
