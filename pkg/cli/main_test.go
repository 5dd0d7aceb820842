package cli_test

import (
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// TestMain applies the test tiers' rules (internal/testtier): in -short,
// nothing may start node, npm or Chromium; the shared driver is stopped and
// the built binary removed after the tests; goroutines must not outlive
// them (a server not closed, a session's browser watcher, a stream left
// open).
func TestMain(m *testing.M) { testtier.Main(m) }
