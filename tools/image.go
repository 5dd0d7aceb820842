package tools

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/imgfit"
)

// addImage attaches a screenshot to the answer within the image caps
// (--image-max-side, --image-max-bytes): a larger one is sent scaled down
// or as JPEG, and a Result line states how, so that an agent maps what it
// sees back to the page (units: what the full image's pixels are, e.g.
// "CSS px of the full page"). The file the tool wrote keeps the full size.
func (c *tabCall) addImage(data []byte, typ, units string) {
	if c.env.Output.ImageResponses == "omit" {
		return
	}
	img, err := imgfit.Fit(data, typ, imgfit.Limits{MaxSide: c.env.Output.ImageMaxSide, MaxBytes: c.env.Output.ImageMaxBytes})
	if err != nil {
		c.resp.Result("- Image sent as taken (%s)", err)
		c.resp.AddImage(base64.StdEncoding.EncodeToString(data), "image/"+typ)
		return
	}
	if line := scaleLine(img, typ, units); line != "" {
		c.resp.ResultText(line)
	}
	c.resp.AddImage(base64.StdEncoding.EncodeToString(img.Data), "image/"+img.Type)
}

// scaleLine says how the image sent differs from the screenshot taken, or
// "" when it does not.
func scaleLine(img imgfit.Image, typ, units string) string {
	format := strings.ToUpper(img.Type)
	if !img.Changed() {
		if img.Type == typ {
			return ""
		}
		return fmt.Sprintf("- Image sent as %s (%d bytes) to stay within the size cap, at full size %dx%d", format, len(img.Data), img.Width, img.Height)
	}
	f := img.Factor()
	return fmt.Sprintf("- Image scaled to %s× of %dx%d (sent %dx%d %s): image coordinates × %s = %s; the file is full size",
		trimFloat(1/f), img.OrigWidth, img.OrigHeight, img.Width, img.Height, format, trimFloat(f), units)
}

// trimFloat prints f with three significant digits (%g drops trailing
// zeros), whole numbers from 100 on.
func trimFloat(f float64) string {
	if f >= 100 {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.3g", f)
}
