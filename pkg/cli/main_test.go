package cli_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/mcptest"
)

// TestMain fails the package when a goroutine outlives its tests, then
// removes the binary mcptest built.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		mcptest.RemoveBinary()
		os.Exit(code)
	}))
}
