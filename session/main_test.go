package session_test

import (
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// TestMain applies the test tiers' rules (internal/testtier): in -short,
// nothing may start node, npm or Chromium; the package's shared driver
// (mcptest.SharedDriver) is stopped after the tests; goroutines must not
// outlive them (a session's browser watcher, a CDP proxy, the driver's own).
func TestMain(m *testing.M) { testtier.Main(m) }
