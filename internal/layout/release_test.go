package layout

import "testing"

func TestTheLastReleaseIsTheNewestDatedVersion(t *testing.T) {
	for text, want := range map[string]string{
		"# Changelog\n\n## Unreleased: v0.3.0\n\n- x\n\n## v0.2.0 (2026-12-20)\n\n## v0.1.0 (2026-12-05)\n": "v0.2.0",
		"# Changelog\n\n## Unreleased: v0.1.0\n\n- x\n":                                                     "",
	} {
		if got := NewestDatedVersion([]byte(text)); got != want {
			t.Errorf("newest release of\n%s\n= %q, want %q", text, got, want)
		}
	}
}
