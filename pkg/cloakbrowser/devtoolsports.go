package cloakbrowser

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// internalDevToolsPorts are the ports a server gives its browsers' internal
// DevTools endpoints (the --remote-debugging-port the CDP proxy relays to).
// They are ports Chromium refuses to load anything from — for every scheme,
// host spelling, proxy and redirect, before name resolution: navigation,
// iframes, fetch, beacons and WebSockets fail with ERR_UNSAFE_PORT
// (kRestrictedPorts in net/base/port_util.cc) — and that no enterprise
// policy can allow again (its kAllowablePorts, 554, 989, 990, 6566 and
// 10080, are left out). So no page of any browser on the machine reaches
// such an endpoint, whatever its principal or session; only
// --explicitly-allowed-ports or a host rule mapping onto one of them could
// open it, and LaunchArgs and CheckExtraArg keep both out.
//
// The first tier is unprivileged; the second (ports of obsolete services
// below 1024) is tried only when the first is taken, and binds only where
// the process may (root, CAP_NET_BIND_SERVICE).
var internalDevToolsPorts = [][]int{
	{1719, 1720, 1723, 2049, 3659, 4045, 5060, 5061, 6000, 6665, 6666, 6667, 6668, 6669, 6697},
	{1, 7, 9, 11, 13, 15, 17, 19, 37, 42, 43, 77, 79, 87, 95, 101, 102, 103, 104, 109, 115, 117, 526, 530, 531, 532, 540, 556},
}

// InternalDevToolsPorts returns a copy of the ports for internal DevTools
// endpoints, in tiers to try in order (see internalDevToolsPorts).
func InternalDevToolsPorts() [][]int {
	out := make([][]int, len(internalDevToolsPorts))
	for i, tier := range internalDevToolsPorts {
		out[i] = slices.Clone(tier)
	}
	return out
}

// IsInternalDevToolsPort reports whether port is one of InternalDevToolsPorts.
func IsInternalDevToolsPort(port int) bool {
	for _, tier := range internalDevToolsPorts {
		if slices.Contains(tier, port) {
			return true
		}
	}
	return false
}

// Switches that could let pages reach an internal DevTools port: a port
// allowed again, or a host rule that maps a host onto one (the port gate
// checks the URL's port, not the address a rule maps it to).
const (
	allowedPortsSwitch = "explicitly-allowed-ports"
	hostResolverSwitch = "host-resolver-rules"
	hostRulesSwitch    = "host-rules"
)

// switchName is a Chromium switch's name without its "-" or "--" prefix
// (both work on POSIX), lower-cased, and its value; ok is false for an
// argument that is not a switch.
func switchName(arg string) (name, value string, ok bool) {
	if !strings.HasPrefix(arg, "-") {
		return "", "", false
	}
	name, value, _ = strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return strings.ToLower(name), value, true
}

// CheckExtraArg says why a user's browser argument would let pages reach
// the server's internal DevTools endpoints, or "": --explicitly-allowed-ports
// naming one of their ports, or a --host-resolver-rules (or --host-rules)
// MAP rule onto one.
func CheckExtraArg(arg string) string {
	name, value, ok := switchName(arg)
	if !ok {
		return ""
	}
	switch name {
	case allowedPortsSwitch:
		if _, dropped := withoutInternalPorts(value); len(dropped) > 0 {
			return fmt.Sprintf("port %s stays closed to pages: the server's internal DevTools endpoints use it; allow other ports", dropped[0])
		}
	case hostResolverSwitch, hostRulesSwitch:
		if _, dropped := withoutRulesOntoInternalPorts(value); len(dropped) > 0 {
			return fmt.Sprintf("rule %q maps onto a port of the server's internal DevTools endpoints, which pages must not reach; map onto another port", dropped[0])
		}
	}
	return ""
}

// keepPagesOffInternalPorts merges a user's switches with the internal
// ports' rule: internal ports are removed from --explicitly-allowed-ports
// (the switch is dropped if none is left) and MAP rules onto them from
// --host-resolver-rules and --host-rules; every other port and rule is kept
// as given. CheckExtraArg refuses such arguments up front; this holds for
// callers that skip it.
func keepPagesOffInternalPorts(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		name, value, ok := switchName(a)
		if !ok {
			out = append(out, a)
			continue
		}
		var filter func(string) (string, []string)
		switch name {
		case allowedPortsSwitch:
			filter = withoutInternalPorts
		case hostResolverSwitch, hostRulesSwitch:
			filter = withoutRulesOntoInternalPorts
		default:
			out = append(out, a)
			continue
		}
		// The flag as given when nothing is dropped; its kept entries
		// otherwise, or nothing when none is left.
		kept, dropped := filter(value)
		prefix, _, _ := strings.Cut(a, "=")
		switch {
		case len(dropped) == 0:
			out = append(out, a)
		case kept != "":
			out = append(out, prefix+"="+kept)
		}
	}
	return out
}

// withoutInternalPorts splits an --explicitly-allowed-ports list ("6000,
// 8080") into the entries to keep, rejoined, and the internal ports it named.
func withoutInternalPorts(list string) (kept string, dropped []string) {
	var keep []string
	for _, p := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err == nil && IsInternalDevToolsPort(n) {
			dropped = append(dropped, strings.TrimSpace(p))
			continue
		}
		keep = append(keep, p)
	}
	return strings.Join(keep, ","), dropped
}

// withoutRulesOntoInternalPorts splits a host rule list ("MAP * 127.0.0.1,
// EXCLUDE localhost") into the rules to keep, rejoined, and the MAP rules
// whose replacement names an internal port. A MAP rule without a
// replacement port keeps the URL's port, which the port gate has checked.
func withoutRulesOntoInternalPorts(rules string) (kept string, dropped []string) {
	var keep []string
	for _, r := range strings.Split(rules, ",") {
		f := strings.Fields(r)
		if len(f) >= 3 && strings.EqualFold(f[0], "map") {
			if _, port, err := net.SplitHostPort(f[len(f)-1]); err == nil {
				if n, err := strconv.Atoi(port); err == nil && IsInternalDevToolsPort(n) {
					dropped = append(dropped, strings.TrimSpace(r))
					continue
				}
			}
		}
		keep = append(keep, r)
	}
	return strings.Join(keep, ","), dropped
}
