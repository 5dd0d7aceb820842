package server_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// imagePages serves a tall article (about 9,000 CSS px of text) and a
// viewport of noise (a canvas of random pixels: a PNG of it is megabytes).
func imagePages(t *testing.T) string {
	t.Helper()
	var tall strings.Builder
	tall.WriteString(`<!doctype html><title>Tall</title><style>body{margin:0;font:16px/1.5 sans-serif} section{height:600px;padding:20px}</style><main>`)
	for i := range 15 {
		tall.WriteString(`<section style="background:hsl(` + strconv.Itoa(i*24) + `,60%,85%)"><h2>Section ` + strconv.Itoa(i+1) + `</h2>`)
		tall.WriteString(strings.Repeat("<p>The committee met on the riverside and voted on the tram extension, line by line.</p>", 8))
		tall.WriteString(`</section>`)
	}
	tall.WriteString(`</main>`)
	mux := http.NewServeMux()
	mux.HandleFunc("/tall.html", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tall.String()) })
	mux.HandleFunc("/noise.html", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><title>Noise</title><style>body{margin:0}canvas{display:block}</style><canvas id=c></canvas><script>
const c = document.getElementById('c'); c.width = innerWidth; c.height = innerHeight;
const x = c.getContext('2d'), d = x.createImageData(c.width, c.height);
for (let i = 0; i < d.data.length; i++) d.data[i] = (i % 4 == 3) ? 255 : Math.random() * 256 | 0;
x.putImageData(d, 0, 0);</script>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// scaleLineRE is the Result line of a scaled image.
var scaleLineRE = regexp.MustCompile(`- Image scaled to ([0-9.]+)× of (\d+)x(\d+) \(sent (\d+)x(\d+) (PNG|JPEG)\): image coordinates × ([0-9.]+) = CSS px of the (full page|viewport); the file is full size`)

// sentImage returns the answer's one image: its MIME type, bytes and size.
func sentImage(t *testing.T, res *mcp.CallToolResult) (string, []byte, image.Config) {
	t.Helper()
	var imgs []mcp.ImageContent
	for _, c := range res.Content {
		if i, ok := c.(mcp.ImageContent); ok {
			imgs = append(imgs, i)
		}
	}
	if len(imgs) != 1 {
		t.Fatalf("%d images in the answer:\n%s", len(imgs), mcptest.Text(res))
	}
	data, err := base64.StdEncoding.DecodeString(imgs[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, typ, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the image sent does not decode: %v", err)
	}
	if "image/"+typ != imgs[0].MIMEType {
		t.Fatalf("the image is a %s sent as %s", typ, imgs[0].MIMEType)
	}
	return imgs[0].MIMEType, data, cfg
}

func fileSize(t *testing.T, p string) image.Config {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, _, err := image.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return cfg
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestScreenshotWithinCaps: a full-page screenshot of a tall page is sent
// within the default caps (1568 px longest side, 800 KiB), the answer says
// by how much it was scaled, and the file it links is the full image; with
// a filename, no image is sent and the file is full size (as upstream).
func TestScreenshotWithinCaps(t *testing.T) {
	base := imagePages(t)
	// The caps are what is tested, not the time: a full-page capture of
	// 9,000 px once took past the default 5 s action timeout on a machine
	// busy with the rest of the browser tier.
	c, _ := inProcess(t, "--timeout-action", "20000")
	must(t, c, "browser_navigate", map[string]any{"url": base + "/tall.html"}, "Page Title: Tall")

	res := c.Call(t, "browser_take_screenshot", map[string]any{"fullPage": true})
	text := mcptest.Text(res)
	if res.IsError {
		t.Fatal(text)
	}
	mime, data, sent := sentImage(t, res)
	if max(sent.Width, sent.Height) > 1568 || len(data) > 800<<10 {
		t.Fatalf("sent %dx%d, %d bytes: over the caps", sent.Width, sent.Height, len(data))
	}
	m := scaleLineRE.FindStringSubmatch(text)
	if m == nil || m[8] != "full page" {
		t.Fatalf("no scale line for the full page:\n%s", text)
	}
	t.Logf("answer:\n%s", text)
	full := fileSize(t, linkedFile(t, text))
	// The page's own width: a viewport image is as wide as the window's
	// viewport (innerWidth), which includes the scrollbar of a tall page (no
	// --hide-scrollbars: it gives the automation away); a full-page image is
	// as wide as the document, without the scrollbar.
	res = c.Call(t, "browser_evaluate", map[string]any{"function": "() => String(innerWidth)"})
	wm := regexp.MustCompile(`"(\d+)"`).FindStringSubmatch(mcptest.Text(res))
	if res.IsError || wm == nil {
		t.Fatalf("read the page's width:\n%s", mcptest.Text(res))
	}
	innerWidth := atoi(t, wm[1])
	if full.Width > innerWidth || full.Width < innerWidth-20 {
		t.Fatalf("full-page file is %d px wide, the viewport %d px: want the viewport less at most a scrollbar", full.Width, innerWidth)
	}
	if full.Height < 8000 || atoi(t, m[2]) != full.Width || atoi(t, m[3]) != full.Height {
		t.Fatalf("the line says %sx%s, the linked file is %dx%d (want the whole ~9000 px page)", m[2], m[3], full.Width, full.Height)
	}
	if atoi(t, m[4]) != sent.Width || atoi(t, m[5]) != sent.Height || "image/"+strings.ToLower(m[6]) != mime || sent.Height != 1568 {
		t.Fatalf("the line says sent %sx%s %s, the image is %dx%d %s", m[4], m[5], m[6], sent.Width, sent.Height, mime)
	}
	scale, _ := strconv.ParseFloat(m[1], 64)
	factor, _ := strconv.ParseFloat(m[7], 64)
	want := float64(full.Height) / float64(sent.Height)
	if d := factor/want - 1; d > 0.01 || d < -0.01 || scale*factor < 0.99 || scale*factor > 1.01 {
		t.Fatalf("scale %s and factor %s, want factor %.3f (%d/%d)", m[1], m[7], want, full.Height, sent.Height)
	}

	// A viewport screenshot within the caps is sent as taken, no line; the
	// window is a desktop size chosen per browser, and a 1920-pixel one is
	// over the 1568-pixel cap: scaled to it, and the line says so.
	res = c.Call(t, "browser_take_screenshot", map[string]any{})
	_, _, vp := sentImage(t, res)
	if text := mcptest.Text(res); innerWidth <= 1568 {
		if strings.Contains(text, "Image scaled") || strings.Contains(text, "Image sent") {
			t.Fatalf("a viewport screenshot within the caps (%d px wide) was changed:\n%s", innerWidth, text)
		}
		if vp.Width != innerWidth || vp.Height >= full.Height {
			t.Fatalf("viewport image %dx%d, want %d px wide (the page's innerWidth) and less tall than the page", vp.Width, vp.Height, innerWidth)
		}
	} else if !strings.Contains(text, fmt.Sprintf("of %dx", innerWidth)) || vp.Width != 1568 {
		t.Fatalf("a viewport screenshot %d px wide, over the cap, sent %dx%d:\n%s", innerWidth, vp.Width, vp.Height, text)
	}

	// With a filename: the file, full size, and no image (upstream).
	res = c.Call(t, "browser_take_screenshot", map[string]any{"fullPage": true, "filename": "tall.png"})
	text = mcptest.Text(res)
	if res.IsError || !strings.Contains(text, "tall.png") {
		t.Fatalf("named screenshot:\n%s", text)
	}
	for _, part := range res.Content {
		if _, ok := part.(mcp.ImageContent); ok {
			t.Fatalf("a named screenshot sent an image:\n%s", text)
		}
	}
	// Full size: the page's height, and its width with or without the
	// scrollbar (Chromium's full-page capture may or may not count it).
	if got := fileSize(t, linkedFile(t, text)); got.Height != full.Height || got.Width > innerWidth || got.Width < innerWidth-20 {
		t.Fatalf("named file is %dx%d, want %d px tall and %d px wide less at most a scrollbar", got.Width, got.Height, full.Height, innerWidth)
	}
}

// TestScreenshotCapFlags: --image-max-bytes makes an incompressible
// viewport a JPEG within the bytes (smaller if need be), the answer says
// so; --image-max-side bounds the side.
func TestScreenshotCapFlags(t *testing.T) {
	base := imagePages(t)
	c, _ := inProcess(t, "--image-max-bytes", "60000", "--image-max-side", "1000")
	must(t, c, "browser_navigate", map[string]any{"url": base + "/noise.html"}, "Page Title: Noise")
	res := c.Call(t, "browser_take_screenshot", map[string]any{})
	text := mcptest.Text(res)
	mime, data, sent := sentImage(t, res)
	if mime != "image/jpeg" || len(data) > 60000 || max(sent.Width, sent.Height) > 1000 {
		t.Fatalf("sent %s %dx%d of %d bytes, want a JPEG within 60000 bytes and 1000 px:\n%s", mime, sent.Width, sent.Height, len(data), text)
	}
	m := scaleLineRE.FindStringSubmatch(text)
	if m == nil || m[6] != "JPEG" || m[8] != "viewport" || atoi(t, m[4]) != sent.Width {
		t.Fatalf("no scale line for the viewport JPEG:\n%s", text)
	}
	t.Logf("answer:\n%s", text)
	if full := fileSize(t, linkedFile(t, text)); atoi(t, m[2]) != full.Width || full.Width <= sent.Width {
		t.Fatalf("file %dx%d, line %s", full.Width, full.Height, m[0])
	}
}
