package session

import (
	"bytes"
	"os"
	"path/filepath"
)

// sharedMarkerFlag tags a shared browser's command line so that its process,
// and the profile Playwright made for it, can be found.
const sharedMarkerFlag = "--cloakbrowser-mcp-shared"

// markerProfile returns the --user-data-dir of the live process whose
// command line carries marker, or "" if there is none.
func markerProfile(marker string) string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return ""
	}
	want := []byte(marker)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(cmd, []byte{0})
		found := false
		for _, a := range args {
			if bytes.Equal(a, want) {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		for _, a := range args {
			if v, ok := bytes.CutPrefix(a, []byte("--user-data-dir=")); ok {
				return string(v)
			}
		}
	}
	return ""
}
