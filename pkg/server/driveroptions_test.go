package server

import (
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
)

// TestDriverOptionsLeanForHTTP: the driver of a Streamable HTTP server,
// which serves many sessions, runs with the lean heap; a stdio server's
// keeps each call fast.
func TestDriverOptionsLeanForHTTP(t *testing.T) {
	cfg := config.Default()
	if DriverOptions(cfg, nil).LeanHeap {
		t.Error("a stdio server's driver has the lean heap")
	}
	cfg.Transport = config.TransportHTTP
	if !DriverOptions(cfg, nil).LeanHeap {
		t.Error("a Streamable HTTP server's driver has no lean heap")
	}
}
