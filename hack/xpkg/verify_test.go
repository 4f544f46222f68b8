package main

import (
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestVerifyFunctionPackageRefusesWhatWouldNotRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	elfBinary, err := os.ReadFile(self) // the test binary: an ELF for this machine, not for the other platform
	if err != nil {
		t.Fatal(err)
	}
	host := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	other := v1.Platform{OS: "linux", Architecture: "arm64"}
	if host.Architecture == "arm64" {
		other.Architecture = "amd64"
	}
	if runtime.GOOS != "linux" || elfMachines[host.Architecture] == elf.EM_NONE {
		t.Skip("the test binary is the ELF these cases need: linux/amd64 or linux/arm64 only")
	}
	cases := map[string]struct {
		binary   []byte
		built    v1.Platform // the platform the image's config says
		verified v1.Platform // the platform the package is checked against
		wantErr  string
	}{
		"NotAnELF":       {binary: []byte("#!/bin/sh\n"), built: host, verified: host, wantErr: "is not an ELF binary"},
		"ConfigMismatch": {binary: elfBinary, built: host, verified: other, wantErr: "config is for " + host.String()},
		"BinaryMismatch": {binary: elfBinary, built: other, verified: other, wantErr: "is built for"},
		"UnknownMachine": {binary: elfBinary, built: v1.Platform{OS: "linux", Architecture: "riscv64"}, verified: v1.Platform{OS: "linux", Architecture: "riscv64"}, wantErr: "no ELF machine known"},
	}
	for n, tc := range cases {
		t.Run(n, func(t *testing.T) {
			img, err := runtimeImage(tc.binary, tc.built)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "function.xpkg")
			if err := tarball.WriteToFile(file, name.MustParseReference("kiso-dev/function:v0.0.0"), img); err != nil {
				t.Fatal(err)
			}
			err = verifyFunctionPackage(file, tc.verified)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("verifyFunctionPackage(): error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
