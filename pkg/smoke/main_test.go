package smoke_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/mcptest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		mcptest.RemoveBinary()
		os.Exit(code)
	}))
}
