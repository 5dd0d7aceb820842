package imgfit

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

func TestMain(m *testing.M) { testtier.Main(m) }

// stripes is a w×h PNG of 8-px black and white columns with a red top
// left quarter (scaling must keep both where they were); with noise every
// pixel is random instead (a PNG of it does not compress).
func stripes(t *testing.T, w, h int, noise bool) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			c := color.RGBA{255, 255, 255, 255}
			if (x/8)%2 == 0 {
				c = color.RGBA{0, 0, 0, 255}
			}
			if x < w/4 && y < h/4 {
				c = color.RGBA{255, 0, 0, 255}
			}
			if noise {
				v := r.Uint32()
				c = color.RGBA{uint8(v), uint8(v >> 8), uint8(v >> 16), 255}
			}
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decode(t *testing.T, data []byte) (image.Image, string) {
	t.Helper()
	img, typ, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img, typ
}

func TestFitWithinLimitsIsUnchanged(t *testing.T) {
	data := stripes(t, 800, 600, false)
	got, err := Fit(data, "png", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Changed() || !bytes.Equal(got.Data, data) || got.Type != "png" || got.Factor() != 1 {
		t.Fatalf("an image within the limits changed: %+v", got)
	}
}

func TestFitScalesTheLongestSide(t *testing.T) {
	data := stripes(t, 1280, 5120, false)
	got, err := Fit(data, "png", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Width != 392 || got.Height != 1568 || got.OrigWidth != 1280 || got.OrigHeight != 5120 {
		t.Fatalf("size %dx%d of %dx%d, want 392x1568 of 1280x5120", got.Width, got.Height, got.OrigWidth, got.OrigHeight)
	}
	if f := got.Factor(); f < 3.26 || f > 3.27 {
		t.Errorf("factor %g, want 5120/1568", f)
	}
	img, typ := decode(t, got.Data)
	if typ != got.Type || img.Bounds().Dx() != got.Width || img.Bounds().Dy() != got.Height {
		t.Fatalf("the data is a %s of %v, the result says %s %dx%d", typ, img.Bounds(), got.Type, got.Width, got.Height)
	}
	if len(got.Data) > DefaultMaxBytes {
		t.Errorf("%d bytes, over the default cap", len(got.Data))
	}
	// The red quarter is still the top left quarter.
	if r, g, b, _ := img.At(40, 150).RGBA(); r>>8 < 200 || g>>8 > 60 || b>>8 > 60 {
		t.Errorf("pixel in the red quarter is %d,%d,%d", r>>8, g>>8, b>>8)
	}
	if r, g, b, _ := img.At(300, 1000).RGBA(); r>>8 > 220 && g>>8 < 60 && b>>8 < 60 {
		t.Errorf("red outside the red quarter")
	}
}

func TestFitReencodesOverTheByteCap(t *testing.T) {
	// Noise does not compress: 600x600 of it is over 1 MB as PNG.
	data := stripes(t, 600, 600, true)
	if len(data) < 1<<20 {
		t.Fatalf("fixture only %d bytes", len(data))
	}
	got, err := Fit(data, "png", Limits{MaxBytes: 600 * 1024})
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "jpeg" || len(got.Data) > 600*1024 {
		t.Fatalf("got %s of %d bytes, want a JPEG within 600 KiB", got.Type, len(got.Data))
	}
	if _, typ := decode(t, got.Data); typ != "jpeg" {
		t.Fatalf("data is %s", typ)
	}
	if got.Width != 600 {
		t.Errorf("width %d: a lower JPEG quality fits, no need to shrink", got.Width)
	}
}

func TestFitShrinksWhenQualityIsNotEnough(t *testing.T) {
	data := stripes(t, 600, 600, true)
	got, err := Fit(data, "png", Limits{MaxBytes: 20 * 1024})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Data) > 20*1024 || got.Width >= 600 || got.Width != got.Height {
		t.Fatalf("got %dx%d of %d bytes", got.Width, got.Height, len(got.Data))
	}
}

func TestFitJPEGAndNoBounds(t *testing.T) {
	src, _ := decode(t, stripes(t, 3000, 1000, false))
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, src, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	got, err := Fit(buf.Bytes(), "jpeg", Limits{MaxSide: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "jpeg" || got.Width != 1000 || got.Height != 333 {
		t.Fatalf("got %s %dx%d, want jpeg 1000x333", got.Type, got.Width, got.Height)
	}
	same, err := Fit(buf.Bytes(), "jpeg", Limits{MaxSide: -1, MaxBytes: -1})
	if err != nil || same.Changed() || !bytes.Equal(same.Data, buf.Bytes()) {
		t.Fatalf("no bounds changed the image: %v", err)
	}
}

func TestFitBadData(t *testing.T) {
	if _, err := Fit([]byte("not an image"), "png", Limits{}); err == nil {
		t.Fatal("no error for bad data")
	}
}
