// Command xpkg builds kiso's Crossplane packages without Docker or a registry, and pushes them.
//
//	go run ./hack/xpkg build   writes the Configuration package and one Function package per function and
//	                           platform into the output directory (default _output/xpkg)
//	go run ./hack/xpkg push    pushes them as REGISTRY/<package>:VERSION, each function's platforms as one
//	                           multi-platform index, and the Configuration depending on them there
//	go run ./hack/xpkg verify  checks each built function package, per platform: its config, non-root user,
//	                           and a static binary for that platform's machine
//
// It runs from the repository root, as make xpkg and make push run it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
)

// cli is the command line; every flag can be set from the environment as well (as make passes them).
type cli struct {
	Output    string   `default:"_output/xpkg" env:"XPKG_OUTPUT" help:"Directory the packages are written to and pushed from." type:"path"`
	Registry  string   `default:"ghcr.io/kiso-dev" env:"REGISTRY" help:"Registry and path the packages are pushed under; the Configuration depends on the functions there."`
	Version   string   `default:"v0.0.0-dev" env:"VERSION" help:"Tag of the pushed packages (a semantic version); the Configuration depends on the functions of the same version."`
	Platforms []string `default:"linux/amd64,linux/arm64" env:"PLATFORMS" help:"Platforms (os/arch) each function is built for and pushed as." name:"platform"`

	Build  buildCmd  `cmd:"" help:"Build the Configuration package and every function's package for every platform."`
	Push   pushCmd   `cmd:"" help:"Push the built packages, each function's platforms as one multi-platform package."`
	Verify verifyCmd `cmd:"" help:"Check each built function package for every platform: its config, non-root user and binary's machine."`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var c cli
	k := kong.Parse(&c, kong.Description("Builds kiso's Crossplane packages without Docker or a registry, and pushes them."))
	k.BindTo(ctx, (*context.Context)(nil))
	err := k.Run(&c)
	stop()
	k.FatalIfErrorf(err)
}
