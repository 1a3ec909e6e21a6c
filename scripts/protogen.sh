#!/bin/sh
# protogen.sh regenerates the Go code of proto/ with protoc and the
# protoc-gen-go and protoc-gen-go-grpc versions pinned by go.mod's tool lines.
# Run from anywhere; the output paths are stable, so regenerating unchanged
# protos gives no diff. With PROTO_OUT set, the code goes under that
# directory instead of proto/ (make proto-check compares the two).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

out=${PROTO_OUT:-proto}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
go build -o "$tmp/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc

protoc \
	--proto_path=proto \
	--plugin=protoc-gen-go="$tmp/protoc-gen-go" \
	--plugin=protoc-gen-go-grpc="$tmp/protoc-gen-go-grpc" \
	--go_out="$out" --go_opt=module=github.com/sluice-sql/sluice/proto \
	--go-grpc_out="$out" --go-grpc_opt=module=github.com/sluice-sql/sluice/proto \
	sluice/v1/sluice.proto
