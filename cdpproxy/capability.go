package cdpproxy

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// capabilityBytes is the entropy of a capability: 256 bits.
const capabilityBytes = 32

// CapabilityLen is the length of a capability in its base64url form.
const CapabilityLen = 43

// newCapability returns 32 random bytes as 43 characters of unpadded
// base64url, a single URL path segment.
func newCapability() string {
	var b [capabilityBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// capDigest is what a proxy compares against: the SHA-256 of the capability.
// Comparing fixed-size digests keeps the comparison's time independent of
// the presented value, its length included.
type capDigest [sha256.Size]byte

func digestOf(s string) capDigest { return sha256.Sum256([]byte(s)) }

// matches reports in constant time whether presented is the capability d was made from.
func (d *capDigest) matches(presented string) bool {
	p := digestOf(presented)
	return subtle.ConstantTimeCompare(p[:], d[:]) == 1
}

// unmatchable is compared against while no capability is published, so a
// probe takes the same time whether or not one is live.
var unmatchable = func() capDigest {
	var d capDigest
	_, _ = rand.Read(d[:]) // a random digest: no known preimage
	return d
}()
