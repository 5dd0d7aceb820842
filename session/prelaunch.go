package session

import (
	"strconv"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

// prelaunchProfile is the profile's placeholder in a prelaunch's record
// (driver.Prelaunch); an argument chosen per session has one of its own
// (prelaunchArg).
const prelaunchProfile = "{{cloakbrowser-mcp:profile}}"

// prelaunchArg is the placeholder of the i-th of a session's args.
func prelaunchArg(i int) string { return "{{cloakbrowser-mcp:arg" + strconv.Itoa(i) + "}}" }

// beginDriver starts the driver for this launch. A driver not started yet
// also starts the browser while it loads (driver.Prelaunch), when all that
// goes into the browser's argv is known now: a binary of our own (not a
// channel's) in a fresh temporary profile (a user's profile may be in use
// by another browser, which would take the command line), no internal
// DevTools port (picked later, for the CDP proxy) and the user agent read
// already (its probe would compete with it). It reports whether the driver
// took the prelaunch (a browser may then run in profile before the launch).
func (s *Session) beginDriver(bin cloakbrowser.BinaryInfo, args []string, profile string, probe *uaProbe) bool {
	ready := probe == nil
	if probe != nil {
		select {
		case <-probe.done:
			ready = probe.ok
		default:
		}
	}
	if !ready || s.cfg.UserDataDir != "" || s.CDP() != nil || s.cfg.Launch.Channel != "" || bin.BinaryPath == "" {
		s.drv.Begin()
		return false
	}
	switch s.drv.BeginPrelaunch(s.cfg.prelaunch(bin, args, profile)) {
	case driver.Prelaunched:
		s.log.Debug().Msg("the browser starts beside the driver, from the last launch of these options")
		return true
	case driver.PrelaunchRecording:
		s.log.Debug().Msg("the driver starts; its launch is kept for the next start to begin the browser with it")
		return true
	}
	return false
}

// prelaunch is the launch of bin with args in profile, as a prelaunch: the
// fingerprint seed and the window, chosen at random per session unless the
// user fixed them (cloakbrowser.PickWindow), are placeholders in its key.
func (c Config) prelaunch(bin cloakbrowser.BinaryInfo, args []string, profile string) driver.Prelaunch {
	vars := map[string]string{prelaunchProfile: profile}
	key := []string{"headless=" + strconv.FormatBool(c.Headless)}
	for i, a := range args {
		if strings.HasPrefix(a, "--fingerprint=") || cloakbrowser.IsWindowArg(a) {
			vars[prelaunchArg(i)] = a
			a = prelaunchArg(i)
		}
		key = append(key, a)
	}
	key = append(key, cloakbrowser.IgnoredDefaultArgs()...)
	return driver.Prelaunch{Command: bin.BinaryPath, Key: key, Vars: vars, Env: browserEnv()}
}
