// Package imgfit fits an image into what an MCP client accepts: a longest
// side and a byte size. Clients reject or silently shrink larger images
// (Claude's, for one, resizes anything over 1568 px on its longest side),
// so the server downscales itself and can say by how much.
package imgfit

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // decoding: Chromium's webp screenshots
)

// Defaults: the longest side vision models take without resizing, and a
// byte size well under the 1 MB some clients refuse above (base64 adds a
// third).
const (
	DefaultMaxSide  = 1568
	DefaultMaxBytes = 800 * 1024
)

// Limits bound an image; a zero field is its default, a negative one no
// bound.
type Limits struct {
	MaxSide  int
	MaxBytes int
}

func (l Limits) side() int {
	if l.MaxSide == 0 {
		return DefaultMaxSide
	}
	return l.MaxSide
}

func (l Limits) bytes() int {
	if l.MaxBytes == 0 {
		return DefaultMaxBytes
	}
	return l.MaxBytes
}

// Image is what Fit returns.
type Image struct {
	Data []byte
	// Type is png, jpeg or webp (webp only when the input was sent as it
	// was: this package encodes png and jpeg).
	Type string
	// Width and Height are the image's; OrigWidth and OrigHeight the
	// input's.
	Width, Height         int
	OrigWidth, OrigHeight int
}

// Changed reports whether the image is not the input.
func (i Image) Changed() bool {
	return i.Width != i.OrigWidth || i.Height != i.OrigHeight
}

// Factor is how many input pixels one pixel of the image is (along the
// longest side): multiply image coordinates by it to get the input's.
func (i Image) Factor() float64 {
	if i.Width >= i.Height {
		return float64(i.OrigWidth) / float64(max(i.Width, 1))
	}
	return float64(i.OrigHeight) / float64(max(i.Height, 1))
}

// jpegQualities are tried in turn when the image is over the byte cap.
var jpegQualities = []int{85, 70, 55, 40}

// Fit returns data (of type png, jpeg or webp) unchanged when it is within
// the limits; else scaled so its longest side is at most MaxSide
// (Catmull-Rom: text stays legible), re-encoded in its type, then, while it
// is still over MaxBytes, as JPEG at falling qualities and, past the
// lowest, smaller again (each step ¾ of the side) until it fits.
func Fit(data []byte, typ string, lim Limits) (Image, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("read the image: %w", err)
	}
	out := Image{Data: data, Type: typ, Width: cfg.Width, Height: cfg.Height, OrigWidth: cfg.Width, OrigHeight: cfg.Height}
	side, maxBytes := lim.side(), lim.bytes()
	long := max(cfg.Width, cfg.Height)
	overSide := side > 0 && long > side
	overBytes := maxBytes > 0 && len(data) > maxBytes
	if !overSide && !overBytes {
		return out, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("decode the image: %w", err)
	}
	scale := 1.0
	if overSide {
		scale = float64(side) / float64(long)
	}
	for range 16 {
		img := src
		if scale < 1 {
			img = Scale(src, scale)
		}
		b := img.Bounds()
		out.Width, out.Height = b.Dx(), b.Dy()
		// First in its own type (a PNG of text often stays smallest),
		// then as JPEG.
		if typ != "jpeg" && (scale < 1 || typ == "webp") {
			var buf bytes.Buffer
			if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
				return Image{}, err
			}
			out.Data, out.Type = buf.Bytes(), "png"
			if maxBytes <= 0 || buf.Len() <= maxBytes {
				return out, nil
			}
		} else if typ == "jpeg" && scale < 1 {
			data, err := encodeJPEG(img, 90)
			if err != nil {
				return Image{}, err
			}
			out.Data, out.Type = data, "jpeg"
			if maxBytes <= 0 || len(data) <= maxBytes {
				return out, nil
			}
		}
		for _, q := range jpegQualities {
			data, err := encodeJPEG(img, q)
			if err != nil {
				return Image{}, err
			}
			out.Data, out.Type = data, "jpeg"
			if len(data) <= maxBytes {
				return out, nil
			}
		}
		scale *= 0.75
		if int(float64(long)*scale) < 16 {
			break
		}
	}
	return Image{}, errors.New("the image does not fit the byte cap even at 16 px")
}

func encodeJPEG(img image.Image, q int) ([]byte, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Scale returns src resized by factor s (0 < s ≤ 1), each side rounded and
// at least 1 px, with the Catmull-Rom kernel.
func Scale(src image.Image, s float64) image.Image {
	b := src.Bounds()
	w := max(1, int(math.Round(float64(b.Dx())*s)))
	h := max(1, int(math.Round(float64(b.Dy())*s)))
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	return dst
}
