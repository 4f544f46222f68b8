package fntest

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// refusingLimit is the request size the server RefusedMessage runs accepts: any larger is refused the way a
// function server refuses a request above its --max-recv-message-size, only cheaper to exceed.
const refusingLimit = 1 << 20

// RefusedMessage is the message of the Synced condition Crossplane writes on an XR whose reconcile failed
// because a request was larger than the function server accepts: gRPC's own error, from a real server with a
// receive limit sent a larger request, wrapped as Crossplane v2 wraps a pipeline step's error.
func RefusedMessage(t testing.TB, function string) string {
	t.Helper()
	lis := bufconn.Listen(4 << 20)
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(refusingLimit))
	fnv1.RegisterFunctionRunnerServiceServer(srv, &fnv1.UnimplementedFunctionRunnerServiceServer{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	big, err := structpb.NewStruct(map[string]any{"padding": strings.Repeat("x", 2*refusingLimit)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fnv1.NewFunctionRunnerServiceClient(conn).RunFunction(t.Context(), &fnv1.RunFunctionRequest{Context: big})
	if err == nil {
		t.Fatal("a server with a receive limit accepted a larger request")
	}
	// Crossplane's wrapping, outermost first: the XR reconciler, the pipeline step, the function runner.
	err = errors.Wrap(errors.Wrapf(errors.Wrapf(err, "cannot run Function %q", function), "cannot run Composition pipeline step %q", function), "cannot compose resources")
	return err.Error()
}

// RefusedStatus is an XR's status after such a reconcile: Synced False, ReconcileError, RefusedMessage.
func RefusedStatus(t testing.TB, function string) map[string]any {
	t.Helper()
	return map[string]any{"conditions": []any{condition("Synced", "False", "ReconcileError", RefusedMessage(t, function))}}
}
