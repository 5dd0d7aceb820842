package recording

import (
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

func TestMain(m *testing.M) { testtier.Main(m) }
