// A CDP command with a deadline the driver keeps.

package page

import (
	"context"
	"math"
	"reflect"
	"time"
	"unsafe"

	"github.com/mxschmitt/playwright-go"
)

// The driver answers a command of a CDP session only when the browser
// does: Playwright's CRSession rejects the pending commands of the
// connection's root session when the browser's pipe closes, not those of
// the child sessions a CDPSession rides on. A command in flight when the
// browser is killed is never answered, and the goroutine that sent it
// through playwright-go's CDPSession.Send (which has no deadline) waits
// for ever. Playwright's protocol carries a deadline for any call
// (metadata.timeout, Playwright ≥ 1.62): the driver then answers a
// timeout error when it passes. playwright-go sends it through its
// channel's SendWithTimeout, which it does not export for CDP sessions;
// channelSendWithTimeout is that method, and sessionChannel finds the
// session's channel. Both are checked by TestTimedSendReachesDriver: an
// upgrade of playwright-go that renames them fails the build or that
// test, and sendCDP falls back to the plain Send (no deadline) when the
// channel is not found.

//go:linkname channelSendWithTimeout github.com/mxschmitt/playwright-go.(*channel).SendWithTimeout
func channelSendWithTimeout(c unsafe.Pointer, method string, timeout *float64, options ...any) (any, error)

// sessionChannel is the playwright-go channel of s, or nil.
func sessionChannel(s playwright.CDPSession) unsafe.Pointer {
	v := reflect.ValueOf(s)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("channel")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.Type().String() != "*playwright.channel" || f.IsNil() {
		return nil
	}
	return f.UnsafePointer()
}

// ctxGrace is how long after its context's deadline the driver answers a
// command whose deadline is the context's: the caller, waiting on the
// context too, has given up by then, and answers with the context's error.
const ctxGrace = 50 * time.Millisecond

// sendCDP sends a command on s that the driver answers (with a timeout
// error) at the latest ctxGrace after ctx's deadline, or after d when that
// is sooner and d is not zero.
func sendCDP(ctx context.Context, s playwright.CDPSession, d time.Duration, method string, params map[string]any) (any, error) {
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) + ctxGrace; d == 0 || left < d {
			d = left
		}
	}
	ch := sessionChannel(s)
	if ch == nil || d == 0 {
		return s.Send(method, params)
	}
	ms := math.Max(1, float64(d.Milliseconds()))
	return channelSendWithTimeout(ch, "send", &ms, map[string]any{"method": method, "params": params})
}
