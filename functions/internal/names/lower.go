package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Lower returns s in lower case with "_" turned into "-", the characters a
// Kubernetes object name allows. When that changes s, a hash of s is
// appended, so names that differed only in case or "_" (two EKS clusters
// "Prod" and "prod") stay different.
func Lower(s string) string {
	out := strings.ReplaceAll(strings.ToLower(s), "_", "-")
	if out == s {
		return out
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(out, "-") + "-" + hex.EncodeToString(sum[:])[:hashLen]
}
