//go:build !linux

package driver

// earlyBrowser is a prelaunched browser the server started (Linux only: a
// prelaunch needs the driver's shim and private TMPDIR).
type earlyBrowser struct{}

type earlyAdopt struct{}

func startEarly(string, *prelaunchPlan) *earlyBrowser { return nil }

func (*earlyBrowser) adopt() *earlyAdopt { return nil }
func (*earlyBrowser) release()           {}
func (*earlyBrowser) stop()              {}
