package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// identity is what a page can read of the browser's identity and window,
// and what its server saw in the request.
type identity struct {
	Webdriver     bool     `json:"webdriver"`
	UA            string   `json:"ua"`
	Brands        []string `json:"brands"`
	FullVersions  []string `json:"fullVersions"`
	Platform      string   `json:"platform"`
	Mobile        bool     `json:"mobile"`
	ScreenW       int      `json:"screenW"`
	ScreenH       int      `json:"screenH"`
	AvailH        int      `json:"availH"`
	OuterW        int      `json:"outerW"`
	OuterH        int      `json:"outerH"`
	InnerW        int      `json:"innerW"`
	InnerH        int      `json:"innerH"`
	DPR           float64  `json:"dpr"`
	MaxTouch      int      `json:"maxTouch"`
	WorkerUA      string   `json:"workerUA"`
	HeaderUA      string   `json:"-"`
	HeaderCH      string   `json:"-"`
	HeaderCHPlat  string   `json:"-"`
	HeaderCHFulls string   `json:"-"`
}

// identityServer serves a page that asks for the full version list client
// hint, and records the identity headers of its last request.
func identityServer(t *testing.T) (*httptest.Server, func() http.Header) {
	t.Helper()
	var mu sync.Mutex
	var last http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/worker.js" {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `postMessage(navigator.userAgent)`)
			return
		}
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		last = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Accept-CH", "Sec-CH-UA-Full-Version-List, Sec-CH-UA-Platform")
		w.Header().Set("Critical-CH", "Sec-CH-UA-Full-Version-List")
		fmt.Fprint(w, `<!doctype html><title>identity</title><p>identity</p>`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() http.Header {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

const identityJS = `async () => {
  const d = navigator.userAgentData;
  const hi = d ? await d.getHighEntropyValues(['fullVersionList']) : {};
  const workerUA = await new Promise(res => { const w = new Worker('/worker.js'); w.onmessage = e => res(e.data); w.onerror = () => res('error') });
  return JSON.stringify({
    webdriver: navigator.webdriver, ua: navigator.userAgent,
    brands: d ? d.brands.map(b => b.brand + ' ' + b.version) : [],
    fullVersions: (hi.fullVersionList || []).map(b => b.brand + ' ' + b.version),
    platform: d ? d.platform : '', mobile: d ? d.mobile : false,
    screenW: screen.width, screenH: screen.height, availH: screen.availHeight,
    outerW: outerWidth, outerH: outerHeight, innerW: innerWidth, innerH: innerHeight,
    dpr: devicePixelRatio, maxTouch: navigator.maxTouchPoints, workerUA,
  });
}`

// readIdentity navigates c to srv and reads the page's identity.
func readIdentity(t *testing.T, c *mcptest.Client, srv *httptest.Server, headers func() http.Header) identity {
	t.Helper()
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/"}, "Page Title: identity")
	out := must(t, c, "browser_evaluate", map[string]any{"function": identityJS})
	var id identity
	if err := json.Unmarshal([]byte(evalResultString(t, out)), &id); err != nil {
		t.Fatalf("identity: %v\n%s", err, out)
	}
	h := headers()
	id.HeaderUA, id.HeaderCH = h.Get("User-Agent"), h.Get("Sec-CH-UA")
	id.HeaderCHPlat, id.HeaderCHFulls = h.Get("Sec-CH-UA-Platform"), h.Get("Sec-CH-UA-Full-Version-List")
	t.Logf("identity: %+v", id)
	return id
}

// evalResultString is the string browser_evaluate returned, from its Result
// section.
func evalResultString(t *testing.T, out string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "### Result\n")
	if !ok {
		t.Fatalf("no result in:\n%s", out)
	}
	var s string
	if err := json.NewDecoder(strings.NewReader(rest)).Decode(&s); err != nil {
		t.Fatalf("result is not a JSON string: %v\n%s", err, out)
	}
	return s
}

// chBrands is a Sec-CH-UA header as "brand version" entries.
func chBrands(h string) []string {
	var out []string
	for _, part := range strings.Split(h, ",") {
		brand, v, _ := strings.Cut(strings.TrimSpace(part), ";v=")
		out = append(out, strings.Trim(brand, `"`)+" "+strings.Trim(v, `"`))
	}
	return out
}

// checkHeadlessFree fails when the page or its server can tell a headless
// browser from its identity, or when the header and the script disagree.
func checkHeadlessFree(t *testing.T, id identity) {
	t.Helper()
	if id.Webdriver {
		t.Error("navigator.webdriver is true")
	}
	for what, v := range map[string]string{"navigator.userAgent": id.UA, "the User-Agent header": id.HeaderUA, "a worker's navigator.userAgent": id.WorkerUA,
		"Sec-CH-UA": id.HeaderCH, "brands": strings.Join(id.Brands, ","), "fullVersionList": strings.Join(id.FullVersions, ",")} {
		if strings.Contains(v, "Headless") {
			t.Errorf("%s says headless: %q", what, v)
		}
	}
	if id.HeaderUA != id.UA || id.WorkerUA != id.UA {
		t.Errorf("user agents disagree: header %q, page %q, worker %q", id.HeaderUA, id.UA, id.WorkerUA)
	}
	if len(id.Brands) == 0 || len(id.FullVersions) != len(id.Brands) {
		t.Errorf("userAgentData: brands %q, fullVersionList %q", id.Brands, id.FullVersions)
	}
	if got := chBrands(id.HeaderCH); strings.Join(got, ",") != strings.Join(id.Brands, ",") {
		t.Errorf("Sec-CH-UA %q disagrees with userAgentData.brands %q", id.HeaderCH, id.Brands)
	}
	if id.HeaderCHPlat != `"`+id.Platform+`"` {
		t.Errorf("Sec-CH-UA-Platform %q disagrees with userAgentData.platform %q", id.HeaderCHPlat, id.Platform)
	}
	if id.HeaderCHFulls == "" || strings.Join(chBrands(id.HeaderCHFulls), ",") != strings.Join(id.FullVersions, ",") {
		t.Errorf("Sec-CH-UA-Full-Version-List %q disagrees with fullVersionList %q", id.HeaderCHFulls, id.FullVersions)
	}
	// The major version in the user agent is the brands'.
	for _, b := range id.Brands {
		if name, v, _ := strings.Cut(b, " "); (name == "Chromium" || name == "Google Chrome") && !strings.Contains(id.UA, "Chrome/"+v+".") {
			t.Errorf("user agent %q is not version %s of the brands", id.UA, v)
		}
	}
}

// checkDesktopWindow fails unless the page is sized like a desktop
// browser's window: not Playwright's 1280x720, the screen larger than the
// window by a taskbar, the window larger than the page by its frame.
func checkDesktopWindow(t *testing.T, id identity) {
	t.Helper()
	if id.InnerW == 1280 && id.InnerH == 720 {
		t.Errorf("the viewport is Playwright's default 1280x720")
	}
	if id.OuterW != id.ScreenW || id.OuterH != id.AvailH || id.AvailH >= id.ScreenH {
		t.Errorf("window %dx%d on a %dx%d screen (%d available): not a maximized desktop window", id.OuterW, id.OuterH, id.ScreenW, id.ScreenH, id.AvailH)
	}
	if id.InnerW > id.OuterW || id.InnerH >= id.OuterH {
		t.Errorf("page %dx%d in a %dx%d window", id.InnerW, id.InnerH, id.OuterW, id.OuterH)
	}
	if id.DPR != 1 || id.MaxTouch != 0 || id.Mobile {
		t.Errorf("devicePixelRatio %v, maxTouchPoints %d, mobile %v: not a desktop", id.DPR, id.MaxTouch, id.Mobile)
	}
	common := map[string]bool{"1920x1080": true, "1536x864": true, "1440x900": true, "1366x768": true}
	if !common[fmt.Sprintf("%dx%d", id.ScreenW, id.ScreenH)] {
		t.Errorf("screen %dx%d is not a common desktop size", id.ScreenW, id.ScreenH)
	}
}

// TestStealthIdentity: by default, in the shared browser and in a browser
// of the server's own, a page sees no headless or automation identity
// (navigator.webdriver, HeadlessChrome in any user agent, header or
// brand), the client hints agree with navigator.userAgentData, and the
// page is sized by a desktop window rather than a fixed 1280x720.
func TestStealthIdentity(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(map[bool]string{false: "shared browser", true: "own browser"}[own], func(t *testing.T) {
			srv, headers := identityServer(t)
			c, _ := startInProcess(t, mcptest.Options{OwnBrowser: own})
			id := readIdentity(t, c, srv, headers)
			checkHeadlessFree(t, id)
			checkDesktopWindow(t, id)
		})
	}
}

// TestStealthViewportSizeWins: --viewport-size is emulated as asked.
func TestStealthViewportSizeWins(t *testing.T) {
	srv, headers := identityServer(t)
	c, _ := inProcess(t, "--viewport-size", "1000x700")
	id := readIdentity(t, c, srv, headers)
	if id.InnerW != 1000 || id.InnerH != 700 {
		t.Errorf("viewport %dx%d, want 1000x700", id.InnerW, id.InnerH)
	}
	checkHeadlessFree(t, id)
}

// TestStealthUserAgentWins: --user-agent is the user agent everywhere (the
// page, the header, a worker); a user agent that names no Chrome version is
// applied as asked, with a warning in the log.
func TestStealthUserAgentWins(t *testing.T) {
	srv, headers := identityServer(t)
	ua := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/150.0.0.0 Safari/537.36"
	c, _ := inProcess(t, "--user-agent", ua)
	id := readIdentity(t, c, srv, headers)
	if id.UA != ua || id.HeaderUA != ua || id.WorkerUA != ua {
		t.Errorf("user agent: page %q, header %q, worker %q; want %q", id.UA, id.HeaderUA, id.WorkerUA, ua)
	}
	if id.Platform != "Windows" || id.HeaderCHPlat != `"Windows"` {
		t.Errorf("platform: userAgentData %q, Sec-CH-UA-Platform %q; want Windows as the user agent says", id.Platform, id.HeaderCHPlat)
	}
	if log := c.Stderr.String(); !strings.Contains(log, "--user-agent says Chrome 150 but the browser is version") {
		t.Errorf("no warning of the user agent's version in the log:\n%s", mcptest.Tail(log, 4000))
	}

	odd := "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
	c2, _ := inProcess(t, "--user-agent", odd)
	id = readIdentity(t, c2, srv, headers)
	if id.UA != odd || id.HeaderUA != odd {
		t.Errorf("user agent: page %q, header %q; want %q", id.UA, id.HeaderUA, odd)
	}
	if log := c2.Stderr.String(); !strings.Contains(log, "names no Chrome version") {
		t.Errorf("no warning of the user agent that disagrees with the brands in the log:\n%s", mcptest.Tail(log, 4000))
	}
}

// TestStealthBinaryInfo: cloakbrowser_binary_info keeps "stealth" a bool
// and reports the protections beside it; on Debian's Chromium the brands
// are reported as a fingerprint risk, not spoofed.
func TestStealthBinaryInfo(t *testing.T) {
	c, _ := inProcess(t)
	out := must(t, c, "cloakbrowser_binary_info", map[string]any{})
	var v struct {
		Binary struct {
			Stealth            *bool `json:"stealth"`
			StealthProtections *struct {
				AutomationFlagOff, WebdriverFalse, UAHeadlessFree, BrandsRisk, FingerprintPatches bool
				Brands, Viewport                                                                  string
				Overrides, Risks                                                                  []string
			} `json:"stealthProtections"`
		} `json:"binary"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	sp := v.Binary.StealthProtections
	if v.Binary.Stealth == nil || *v.Binary.Stealth || sp == nil {
		t.Fatalf("want stealth false and stealthProtections:\n%s", out)
	}
	if !sp.AutomationFlagOff || !sp.WebdriverFalse || !sp.UAHeadlessFree || sp.FingerprintPatches || !sp.BrandsRisk ||
		!strings.Contains(sp.Brands, "not Google Chrome") || !strings.HasPrefix(sp.Viewport, "window ") {
		t.Errorf("stealthProtections:\n%s", out)
	}
	if strings.Join(sp.Overrides, ",") != "userAgent" {
		t.Errorf("overrides %q, want only the user agent's", sp.Overrides)
	}
}

// TestStealthTimezoneAtLaunch: a time zone from the context options reaches
// the page of a browser of the server's own from its launch (TZ), and the
// one of a shared browser's context from Playwright's override; the report
// says which.
func TestStealthTimezoneAtLaunch(t *testing.T) {
	srv, _ := identityServer(t)
	for _, own := range []bool{true, false} {
		t.Run(map[bool]string{false: "shared browser", true: "own browser"}[own], func(t *testing.T) {
			c, _ := startInProcess(t, mcptest.Options{OwnBrowser: own}, "--context-options", `{"timezoneId":"Asia/Tokyo"}`)
			must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/"}, "Page Title: identity")
			must(t, c, "browser_evaluate", map[string]any{"function": "() => Intl.DateTimeFormat().resolvedOptions().timeZone + ' ' + new Date(0).getTimezoneOffset()"}, `"Asia/Tokyo -540"`)
			info := must(t, c, "cloakbrowser_binary_info", map[string]any{})
			want := map[bool]string{true: `"launchSettings": [
        "--window-size",
        "TZ"
      ]`, false: `"timezone"`}[own]
			if !strings.Contains(info, want) {
				t.Errorf("binary info lacks %s:\n%s", want, info)
			}
		})
	}
}

// TestStealthDeviceEmulationEnds: browser_set_device sends the device's user
// agent with client hints that agree (mobile, platform), and ending it
// returns to the context's own headed user agent, not the headless one.
func TestStealthDeviceEmulationEnds(t *testing.T) {
	srv, headers := identityServer(t)
	c, _ := inProcess(t, "--caps", "emulation")
	before := readIdentity(t, c, srv, headers)
	must(t, c, "browser_set_device", map[string]any{"device": "Pixel 5"}, "Emulating Pixel 5")
	id := readIdentity(t, c, srv, headers)
	if !strings.Contains(id.UA, "Android") || !id.Mobile || id.Platform != "Android" || id.HeaderCHPlat != `"Android"` || len(id.Brands) == 0 {
		t.Errorf("Pixel 5: user agent %q, mobile %v, platform %q (header %s), brands %q", id.UA, id.Mobile, id.Platform, id.HeaderCHPlat, id.Brands)
	}
	must(t, c, "browser_set_device", map[string]any{"device": ""}, "Device emulation ended")
	id = readIdentity(t, c, srv, headers)
	checkHeadlessFree(t, id)
	if id.UA != before.UA || id.Mobile {
		t.Errorf("after the device: user agent %q (mobile %v), want %q as before", id.UA, id.Mobile, before.UA)
	}
}

// TestStealthDeviceWins: --device is applied consistently: its user agent
// on the page, the header and a worker, client hints of its platform and
// mobile flag with the browser's own brands, its viewport and touch.
func TestStealthDeviceWins(t *testing.T) {
	srv, headers := identityServer(t)
	c, _ := inProcess(t, "--device", "Pixel 7")
	id := readIdentity(t, c, srv, headers)
	if !strings.Contains(id.UA, "Pixel 7") || id.HeaderUA != id.UA || id.WorkerUA != id.UA {
		t.Errorf("user agent: page %q, header %q, worker %q", id.UA, id.HeaderUA, id.WorkerUA)
	}
	if id.Platform != "Android" || !id.Mobile || id.HeaderCHPlat != `"Android"` || len(id.Brands) == 0 ||
		strings.Join(chBrands(id.HeaderCH), ",") != strings.Join(id.Brands, ",") {
		t.Errorf("client hints: platform %q (header %s), mobile %v, brands %q (header %s)", id.Platform, id.HeaderCHPlat, id.Mobile, id.Brands, id.HeaderCH)
	}
	// The page has no <meta name=viewport>: its layout is a mobile
	// browser's 980 pixels wide; the screen is the device's.
	if id.ScreenW != 412 || id.MaxTouch == 0 || id.DPR <= 1 {
		t.Errorf("screen %dx%d, maxTouchPoints %d, devicePixelRatio %v: not Pixel 7's", id.ScreenW, id.ScreenH, id.MaxTouch, id.DPR)
	}
}
