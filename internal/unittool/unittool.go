// Package unittool finds the tools `make unit` provides to the unit tests (promtool, AWS's IAM service
// reference), each named by an environment variable.
package unittool

import (
	"os"
	"testing"
)

// PathT returns the path the environment variable env names, which `make unit` sets to the tool it builds or
// fetches (what, for the message). Without it a developer's `go test` skips the test, and CI (the variable CI
// set, as every CI service sets it) fails it: CI runs `make unit`, which provides the tool.
func PathT(t testing.TB, env, what string) string {
	t.Helper()
	p := os.Getenv(env)
	switch {
	case p != "":
		return p
	case os.Getenv("CI") != "":
		t.Fatalf("%s is not set: run the tests with make unit, which provides %s", env, what)
	default:
		t.Skipf("%s is not set: make unit provides %s and runs this test", env, what)
	}
	return ""
}
