package server

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/server/auth"
)

// TestForwarder runs a pull query on another server with the caller's
// credentials, as a server of a cluster does for the partitions it does
// not own.
func TestForwarder(t *testing.T) {
	users := auth.NewUsers()
	users.Add("alice", "pw")
	w := newWorld(t, Options{GRPCOptions: users.ServerOptions()})
	w.exec(t, `CREATE STREAM s (id VARCHAR KEY, n INT) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);
		INSERT INTO s (id, n) VALUES ('a', 1);
		INSERT INTO s (id, n) VALUES ('b', 2);`)
	f := NewForwarder(grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer f.Close()
	ctx := context.Background()
	if _, err := f.PullQuery(ctx, w.addr, engine.NewSession(), "SELECT * FROM s;"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without credentials: %v", err)
	}
	res, err := f.PullQuery(auth.WithCaller(ctx, auth.HeaderValue("alice", "pw")), w.addr, engine.NewSession(), "SELECT * FROM s;")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.Rows); got != "[[a 1] [b 2]]" {
		t.Errorf("rows %s, want [[a 1] [b 2]]", got)
	}
}
