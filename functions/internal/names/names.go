// Package names builds Kubernetes object names that always fit their limits.
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxLabelValue is the longest a label value (and so a NodePool name, which is
// also the karpenter.sh/nodepool label value) may be.
const MaxLabelValue = 63

// hashLen is how many hex digits of the full name's SHA-256 a shortened name
// keeps: 32 bits make an accidental collision between two shortened names of
// one cluster vanishingly unlikely.
const hashLen = 8

// Join joins parts with "-" and, when the result is longer than maxLen, cuts it
// and appends a hash of the full name, so the same parts always give the same
// name and different parts give different names.
func Join(maxLen int, parts ...string) string {
	return Shorten(maxLen, strings.Join(parts, "-"))
}

// Shorten returns name when it fits maxLen; otherwise it cuts it and appends a
// hash of the whole name. The cut never ends in "-" or ".", so a DNS-1123
// name stays one.
func Shorten(maxLen int, name string) string {
	if len(name) <= maxLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	head := strings.TrimRight(name[:maxLen-hashLen-1], "-.")
	return head + "-" + hex.EncodeToString(sum[:])[:hashLen]
}

// A Cut shortens names to MaxLen behind a Prefix of the caller's, with a hash
// of HashLen hex digits. The caller picks a prefix that no name it leaves whole
// can start with, so that shortened and whole names never meet.
type Cut struct {
	MaxLen  int
	Prefix  string
	HashLen int
}

// Shorten returns the cut's prefix + the start of body, cut to fit MaxLen with
// "-" and the first HashLen hex digits of the SHA-256 of full. The cut never
// ends in "-" or ".", so a DNS-1123 name stays one.
func (c Cut) Shorten(body, full string) string {
	maxLen, prefix, hashLen := c.MaxLen, c.Prefix, c.HashLen
	sum := sha256.Sum256([]byte(full))
	room := maxLen - len(prefix) - 1 - hashLen
	if room > len(body) {
		room = len(body)
	}
	head := strings.TrimRight(body[:max(room, 0)], "-.")
	return prefix + head + "-" + hex.EncodeToString(sum[:])[:hashLen]
}
