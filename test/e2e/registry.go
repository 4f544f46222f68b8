package e2e

import (
	"context"
	"net/http"
	"strconv"

	"github.com/kiso-dev/kiso/internal/process"
)

// A registry is an in-memory OCI registry on loopback that kiso's packages are pushed to and Crossplane
// pulls them from. go-containerregistry, on both sides, speaks plain HTTP to 127.0.0.1.
type registry struct {
	host string // 127.0.0.1:PORT
}

func startRegistry(ctx context.Context, servers *process.Group, crane string) (*registry, error) {
	port, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	srv, err := servers.Start("registry", crane, []string{"registry", "serve", "--address", host}, nil)
	if err != nil {
		return nil, err
	}
	if err := waitForHTTP(ctx, srv, http.DefaultClient, "http://"+host+"/v2/", ""); err != nil {
		return nil, err
	}
	return &registry{host: host}, nil
}

// repository is where a package of kiso's lives in this registry.
func (r *registry) repository(pkg string) string {
	return r.host + "/" + packageOwner + "/" + pkg
}
