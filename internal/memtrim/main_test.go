package memtrim

import (
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// TestMain applies the test tiers' rules (internal/testtier): in -short,
// nothing may start node, npm or Chromium; goroutines must not outlive
// the tests.
func TestMain(m *testing.M) { testtier.Main(m) }
