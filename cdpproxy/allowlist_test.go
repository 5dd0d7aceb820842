package cdpproxy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestMethodAllowlist: what CDP libraries send on connect and for common
// actions is forwarded, with and without the file policy; each method that
// reaches outside the browser is refused with a CDP error that names it and
// says why.
func TestMethodAllowlist(t *testing.T) {
	forwarded := []string{
		// Playwright's connectOverCDP and its page setup.
		"Browser.getVersion", "Target.setAutoAttach", "Target.getTargetInfo", "Target.createTarget",
		"Target.createBrowserContext", "Target.disposeBrowserContext", "Target.detachFromTarget",
		"Page.enable", "Page.getFrameTree", "Page.setLifecycleEventsEnabled", "Page.addScriptToEvaluateOnNewDocument",
		"Page.createIsolatedWorld", "Page.captureScreenshot", "Page.printToPDF", "Page.bringToFront", "Page.reload",
		"Runtime.enable", "Runtime.addBinding", "Runtime.runIfWaitingForDebugger", "Runtime.callFunctionOn",
		"Network.enable", "Network.setExtraHTTPHeaders", "Network.getResponseBody", "Network.setCacheDisabled",
		"Emulation.setFocusEmulationEnabled", "Emulation.setEmulatedMedia", "Emulation.setDeviceMetricsOverride",
		"Log.enable", "Fetch.enable", "Fetch.fulfillRequest", "Fetch.continueRequest", "Input.dispatchMouseEvent",
		"Input.dispatchKeyEvent", "Input.insertText", "DOM.describeNode", "DOM.resolveNode", "DOM.getContentQuads",
		"Accessibility.getFullAXTree", "Storage.getCookies", "Storage.setCookies", "Browser.grantPermissions",
		"Browser.resetPermissions", "Browser.setDownloadBehavior", "Browser.close", "Tracing.start", "Tracing.end",
		"IO.read", "IO.close", "Security.setIgnoreCertificateErrors", "CSS.enable", "Profiler.startPreciseCoverage",
		"Debugger.enable", "HeapProfiler.collectGarbage", "Overlay.setPausedInDebuggerMessage",
		// Puppeteer's connect and chromedp's.
		"Target.setDiscoverTargets", "Target.getBrowserContexts", "Target.attachToTarget", "Target.getTargets",
		"Target.activateTarget", "Target.closeTarget", "Target.attachToBrowserTarget", "Target.sendMessageToTarget",
		"Performance.enable", "Performance.getMetrics", "Browser.getWindowForTarget", "Browser.setWindowBounds",
		"Browser.setPermission", "ServiceWorker.enable", "WebAuthn.enable", "Autofill.trigger", "Inspector.enable",
	}
	refused := []struct{ method, why string }{
		{"Target.openDevTools", "the DevTools frontend has powers"},
		{"Target.getDevToolsTarget", "the DevTools frontend has powers"},
		{"Target.exposeDevToolsProtocol", "the DevTools frontend has powers"},
		{"Target.setRemoteLocations", "connect to other DevTools endpoints"},
		{"Browser.getBrowserCommandLine", "shows the server's command line"},
		{"Browser.executeBrowserCommand", "browser's own UI"},
		{"Browser.setDockTile", "browser's own UI"},
		{"Browser.crash", "use Browser.close"},
		{"Browser.crashGpuProcess", "use Browser.close"},
		{"Browser.getHistograms", "not on the proxy's allowlist"},
		{"Extensions.loadUnpacked", "loading extensions from disk is refused"},
		{"Extensions.getStorageItems", "extensions act beyond the pages"},
		{"PWA.install", "installs apps on the server's machine"},
		{"PWA.launch", "installs apps on the server's machine"},
		{"SystemInfo.getInfo", "describes the server's machine"},
		{"SystemInfo.getProcessInfo", "describes the server's machine"},
		{"Tethering.bind", "opens ports on the server's machine"},
		{"Cast.startTabMirroring", "reaches devices on the server's network"},
		{"Memory.getBrowserSamplingProfile", "native memory"},
		{"DeviceAccess.selectPrompt", "real Bluetooth and USB devices"},
		{"Target.newFeature", "not on the proxy's allowlist"},
		{"NewDomain.enable", "not on the proxy's allowlist"},
		{"target.openDevTools", "not on the proxy's allowlist"},
		{"Runtime", "not on the proxy's allowlist"},
		{"", "not on the proxy's allowlist"},
	}
	for _, restricted := range []bool{true, false} {
		var g *fileGuard
		if restricted {
			g = newFileGuard(FilePolicy{})
		}
		t.Run(fmt.Sprintf("file policy %v", restricted), func(t *testing.T) {
			for _, m := range forwarded {
				t.Run(m, func(t *testing.T) {
					params := map[string]string{
						"Browser.setDownloadBehavior": `{"behavior":"deny"}`,
						"Target.sendMessageToTarget":  `{"message":"{\"id\":1,\"method\":\"Page.enable\"}"}`,
					}[m]
					if params == "" {
						params = "{}"
					}
					msg := fmt.Sprintf(`{"id":1,"method":%q,"params":%s}`, m, params)
					if reply := newInspector(g, nil, nil, "").client([]byte(msg)); reply != nil {
						t.Fatalf("refused: %s", reply)
					}
				})
			}
			for _, tt := range refused {
				t.Run("refuses "+tt.method, func(t *testing.T) {
					msg := fmt.Sprintf(`{"id":9,"sessionId":"S1","method":%q,"params":{"targetId":"T"}}`, tt.method)
					a := mustRefuse(t, newInspector(g, nil, nil, "").client([]byte(msg)), cdpMethodNotFound, tt.why)
					if *a.ID != 9 || a.SessionID != "S1" {
						t.Fatalf("refusal does not echo id and sessionId: %+v", a)
					}
					if !strings.Contains(a.Error.Message, "docs/security.md") {
						t.Fatalf("refusal %q does not point to docs/security.md", a.Error.Message)
					}
				})
			}
		})
	}
	// Inside Target.sendMessageToTarget too.
	inner, _ := json.Marshal(`{"id":1,"method":"Target.openDevTools","params":{"targetId":"T"}}`)
	msg := `{"id":3,"method":"Target.sendMessageToTarget","params":{"message":` + string(inner) + `}}`
	mustRefuse(t, newInspector(nil, nil, nil, "").client([]byte(msg)), cdpMethodNotFound, "Target.openDevTools")
}

// mustRefuse decodes reply as a CDP error with code and a message holding want.
func mustRefuse(t *testing.T, reply []byte, code int, want string) cdpAnswer {
	t.Helper()
	if reply == nil {
		t.Fatalf("forwarded; want a refusal with %q", want)
	}
	var a cdpAnswer
	if err := json.Unmarshal(reply, &a); err != nil || a.Error == nil {
		t.Fatalf("refusal is not a CDP error: %s", reply)
	}
	if a.Error.Code != code || !strings.Contains(a.Error.Message, want) {
		t.Fatalf("refusal %s; want code %d and %q", reply, code, want)
	}
	return a
}
