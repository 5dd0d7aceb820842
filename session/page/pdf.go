package page

import (
	"context"

	"github.com/mxschmitt/playwright-go"
)

// PDF prints the tab's page to PDF, backgrounds included. Chromium prints
// only when headless.
func (t *Tab) PDF(ctx context.Context) ([]byte, error) {
	return call(ctx, t.c, "save PDF", stopOn{modal: t}, func() ([]byte, error) {
		return t.p.PDF(playwright.PagePdfOptions{PrintBackground: playwright.Bool(true)})
	})
}
