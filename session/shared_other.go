//go:build !linux

package session

const sharedMarkerFlag = "--cloakbrowser-mcp-shared"

// markerProfile is not implemented off Linux: the shared browser is then
// only closed through Playwright.
func markerProfile(string) string { return "" }
