package session

import (
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
)

// ProfilePIDs lists live processes whose command line names the profile
// directory: the browser and its helpers (none off Linux).
func ProfilePIDs(profile string) []int {
	if profile == "" {
		return nil
	}
	var pids []int
	for _, p := range proctree.WithArg("--user-data-dir=" + profile) {
		pids = append(pids, p.PID)
	}
	return pids
}

// sharedMarkerFlag tags a shared browser's command line so that its process,
// and the profile Playwright made for it, can be found.
const sharedMarkerFlag = "--cloakbrowser-mcp-shared"

// markerProfile returns the --user-data-dir of the live process whose
// command line carries marker, or "" if there is none (always off Linux:
// the shared browser is then only closed through Playwright).
func markerProfile(marker string) string {
	for _, p := range proctree.WithArg(marker) {
		for _, a := range p.Args {
			if v, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
				return v
			}
		}
	}
	return ""
}
