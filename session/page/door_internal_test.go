package page

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mxschmitt/playwright-go"
)

// TestClassify checks the door's reading of Playwright's errors as
// playwright-go wraps them (errors.Is, not the message).
func TestClassify(t *testing.T) {
	wrap := func(name, msg string) error {
		sentinel := map[string]error{"TimeoutError": playwright.ErrTimeout, "TargetClosedError": playwright.ErrTargetClosed}[name]
		return fmt.Errorf("%w: %w: %w", playwright.ErrPlaywright, sentinel, &playwright.Error{Name: name, Message: msg})
	}
	closed := classify("click", wrap("TargetClosedError", "Target page, context or browser has been closed\nCall log: …"), false)
	var pe *PageError
	if !errors.As(closed, &pe) || !errors.Is(closed, ErrTabClosed) || pe.Msg != "Target page, context or browser has been closed" {
		t.Fatalf("target closed: %#v", closed)
	}
	// A message that merely mentions it is not a closed target.
	if err := classify("evaluate", errors.New("Error: Target closed, said the page"), false); errors.Is(err, ErrTabClosed) {
		t.Fatalf("a page's message read as a closed tab: %v", err)
	}
	timeout := classify("click", wrap("TimeoutError", "Timeout 5000ms exceeded."), false)
	var te *TimeoutError
	if !errors.As(timeout, &te) || !errors.Is(timeout, playwright.ErrTimeout) {
		t.Fatalf("timeout: %#v", timeout)
	}
	if err := classify("click", errors.New("x"), true); !errors.Is(err, ErrBrowserGone) {
		t.Fatalf("lost: %v", err)
	}
}
