package session

import (
	"context"

	"github.com/mxschmitt/playwright-go"
)

// Devices returns Playwright's device descriptors ("iPhone 13", "Pixel 7",
// …) from the process's driver.
func (s *Session) Devices(ctx context.Context) (map[string]*playwright.DeviceDescriptor, error) {
	pw, err := s.drv.Get(ctx)
	if err != nil {
		return nil, err
	}
	return pw.Devices, nil
}
