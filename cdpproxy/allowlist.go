package cdpproxy

import "strings"

// The proxy forwards a client's command only if its method is on this
// allowlist: the domains whose every method acts inside the client's own
// browser (its pages, workers, network stack and storage), and the methods
// of Browser and Target a CDP library needs. Playwright's connectOverCDP,
// Puppeteer's connect and chromedp send nothing else. A method that reaches
// outside the browser — the server's machine, its network, other browsers,
// the DevTools frontend — is not on it. Some allowed methods are checked
// further (inspect.go): URLs, file paths, target ids and sessions.
//
// The lists name what exists in Chromium's protocol today; a method Chromium
// adds later is refused until it is listed here.

// allowedDomains are the domains whose every method is forwarded.
var allowedDomains = map[string]bool{
	"Accessibility": true, "Animation": true, "Audits": true, "Autofill": true,
	"BackgroundService": true, "BluetoothEmulation": true, "CacheStorage": true,
	"CSS": true, "Console": true, "Debugger": true,
	"DeviceOrientation": true, "DOM": true, "DOMDebugger": true, "DOMSnapshot": true,
	"DOMStorage": true, "Emulation": true, "EventBreakpoints": true, "FedCm": true,
	"Fetch": true, "FileSystem": true, "HeadlessExperimental": true, "HeapProfiler": true,
	"IndexedDB": true, "Input": true, "Inspector": true, "IO": true, "LayerTree": true,
	"Log": true, "Media": true, "Network": true, "Overlay": true, "Page": true,
	"Performance": true, "PerformanceTimeline": true, "Preload": true, "Profiler": true,
	"Runtime": true, "Schema": true, "Security": true, "ServiceWorker": true,
	"Storage": true, "Tracing": true, "WebAudio": true, "WebAuthn": true,
}

// allowedMethods are the methods forwarded from the other domains.
var allowedMethods = map[string]bool{
	// Browser: version, windows, permissions, downloads (checked), close.
	"Browser.getVersion": true, "Browser.close": true,
	"Browser.getWindowForTarget": true, "Browser.getWindowBounds": true,
	"Browser.setWindowBounds": true, "Browser.setContentsSize": true,
	"Browser.grantPermissions": true, "Browser.resetPermissions": true, "Browser.setPermission": true,
	"Browser.setDownloadBehavior": true, "Browser.cancelDownload": true,
	// Target: discovery and sessions; target ids and URLs are checked.
	"Target.getTargets": true, "Target.getTargetInfo": true,
	"Target.setDiscoverTargets": true, "Target.setAutoAttach": true, "Target.autoAttachRelated": true,
	"Target.attachToTarget": true, "Target.attachToBrowserTarget": true, "Target.detachFromTarget": true,
	"Target.sendMessageToTarget": true, "Target.activateTarget": true, "Target.closeTarget": true,
	"Target.createTarget": true, "Target.createBrowserContext": true,
	"Target.getBrowserContexts": true, "Target.disposeBrowserContext": true,
}

// Why some methods and domains are refused, for a refusal that says so.
const (
	whyDevTools = "the DevTools frontend has powers no CDP client gets here (it reads local files and " +
		"reaches other browsers' DevTools ports)"
	whyMachine = "it reaches the server's machine, not just this browser"
)

var refusedMethods = map[string]string{
	"Target.openDevTools":           whyDevTools,
	"Target.getDevToolsTarget":      whyDevTools,
	"Target.exposeDevToolsProtocol": whyDevTools,
	"Target.setRemoteLocations":     "it makes the browser connect to other DevTools endpoints",
	"Browser.getBrowserCommandLine": "it shows the server's command line",
	"Browser.executeBrowserCommand": "it drives the browser's own UI",
	"Browser.setDockTile":           "it drives the browser's own UI",
	"Browser.crash":                 "it kills the browser the MCP session uses; use Browser.close",
	"Browser.crashGpuProcess":       "it kills the browser the MCP session uses; use Browser.close",
	"Extensions.loadUnpacked":       "loading extensions from disk is refused by this server's file policy",
}

var refusedDomains = map[string]string{
	"Extensions":   "extensions act beyond the pages of this browser",
	"PWA":          "it installs apps on the server's machine",
	"SystemInfo":   "it describes the server's machine",
	"Tethering":    "it opens ports on the server's machine",
	"Cast":         "it reaches devices on the server's network",
	"Memory":       "it reports the native memory of the browser's processes and the machine's libraries",
	"DeviceAccess": "it picks real Bluetooth and USB devices of the server's machine",
}

// methodRefusal is the refusal of a method that is not on the allowlist,
// or nil if it is.
func methodRefusal(method string) *refusal {
	domain, name, _ := strings.Cut(method, ".")
	if name != "" && allowedDomains[domain] || allowedMethods[method] {
		return nil
	}
	why := refusedMethods[method]
	if why == "" {
		why = refusedDomains[domain]
	}
	if why == "" {
		why = "it is not on the proxy's allowlist of methods that act inside this browser"
	}
	return &refusal{cdpMethodNotFound, quote(method) + " is not forwarded by this CDP proxy: " + why +
		" (see docs/security.md)"}
}
