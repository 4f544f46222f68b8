package main

import (
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/crossplane/function-sdk-go/errors"
)

// parsePlatforms parses os/arch pairs. Variants are refused: they would need GOARM or GOAMD64 to match.
func parsePlatforms(specs []string) ([]v1.Platform, error) {
	platforms := make([]v1.Platform, 0, len(specs))
	for _, s := range specs {
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot parse platform %q", s)
		}
		if p.OS == "" || p.Architecture == "" || p.Variant != "" || p.OSVersion != "" {
			return nil, errors.Errorf("platform %q: want os/arch, such as linux/arm64", s)
		}
		if slices.ContainsFunc(platforms, p.Equals) {
			return nil, errors.Errorf("platform %q is listed twice", s)
		}
		platforms = append(platforms, *p)
	}
	if len(platforms) == 0 {
		return nil, errors.New("cannot build for no platform")
	}
	return platforms, nil
}

// platformSuffix names a platform in file names: linux-arm64.
func platformSuffix(p v1.Platform) string {
	return strings.Join([]string{p.OS, p.Architecture}, "-")
}
