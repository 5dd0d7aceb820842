package session

import (
	"context"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// Devices returns Playwright's device descriptors ("iPhone 13", "Pixel 7",
// …) from the process's driver, by name.
func (s *Session) Devices(ctx context.Context) (map[string]page.Device, error) {
	pw, err := s.drv.Get(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]page.Device, len(pw.Devices))
	for name, d := range pw.Devices {
		if d == nil {
			continue
		}
		out[name] = page.Device{
			UserAgent:         d.UserAgent,
			Viewport:          size(d.Viewport),
			Screen:            size(d.Screen),
			DeviceScaleFactor: d.DeviceScaleFactor,
			IsMobile:          d.IsMobile,
			HasTouch:          d.HasTouch,
		}
	}
	return out, nil
}

func size(s *playwright.Size) *page.Size {
	if s == nil {
		return nil
	}
	return &page.Size{Width: s.Width, Height: s.Height}
}
