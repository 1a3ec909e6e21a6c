# Sluice build, test and lint entry points. `make test` is what CI runs.

GO        ?= go
BIN       ?= bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)

.PHONY: bench latency crash all build run test test-kafka test-connect unit corpus linear lint fuzz fmt proto proto-check release release-check clean

all: build

build:
	$(GO) build -o $(BIN)/sluice-server ./cmd/server
	$(GO) build -o $(BIN)/sluice ./cmd/cli

# Playground mode: an embedded single-node broker and the server, data
# under ./sluice-data.
run:
	$(GO) run ./cmd/server

# Everything CI checks: formatting, vet, staticcheck, the tests with the
# race detector, and the conformance corpus and the parser's allocation
# test (without it).
test: lint unit corpus linear release-check

unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /integration$$)

# ksqlDB's query-validation corpus from ../shared/qtt, judged against the
# floors in internal/qtt/floors.json, and its REST query-validation corpus
# from ../shared/rqtt, judged per file against internal/rqtt/floors.json.
corpus:
	$(GO) test -count=1 -run TestCorpus -v ./internal/qtt
	$(GO) test -count=1 -run TestCorpus -v ./internal/rqtt

# The parser's allocations grow linearly with its input (a test that the
# race detector's own allocations would blur, so it runs without it).
linear:
	$(GO) test -count=1 -run 'TestParseAllocatesLinearly' -v ./parser

# The integration suite against a real Apache Kafka (./integration, with
# both client adapters), which scripts/kafka.sh fetches from Maven Central
# and runs with the machine's Java: first on a single broker (restarted
# mid-stream by a test, and the transaction tests of kafka/), then kafka/'s
# SASL tests on a SASL+TLS broker, then the cluster fault tests on 3 nodes.
# The brokers are stopped however it ends. Prints the time of each part.
KAFKA_SH := ./scripts/kafka.sh
test-kafka:
	@if $(KAFKA_SH) bootstrap >/dev/null 2>&1; then \
	  echo "test-kafka: scripts/kafka.sh has a broker up already; stop it with scripts/kafka.sh down"; exit 1; fi; \
	  trap '$(KAFKA_SH) down >/dev/null 2>&1 || true' EXIT; set -e; \
	  t=$$(date +%s); $(KAFKA_SH) fetch; \
	  echo "test-kafka: fetch took $$(($$(date +%s) - t)) s"; \
	  t=$$(date +%s); addr=$$($(KAFKA_SH) up); \
	  echo "test-kafka: 1 broker up at $$addr in $$(($$(date +%s) - t)) s"; \
	  t=$$(date +%s); SLUICE_TEST_KAFKA=$$addr SLUICE_TEST_KAFKA_NODES=1 $(GO) test -count=1 -timeout 15m -v ./integration/...; \
	  SLUICE_TEST_KAFKA=$$addr $(GO) test -count=1 -run 'TestTransactions' ./kafka; \
	  echo "test-kafka: single-broker tests took $$(($$(date +%s) - t)) s"; \
	  t=$$(date +%s); $(KAFKA_SH) down; addr=$$($(KAFKA_SH) up --sasl --tls); \
	  echo "test-kafka: SASL+TLS broker up at $$addr in $$(($$(date +%s) - t)) s"; \
	  t=$$(date +%s); SLUICE_TEST_KAFKA_SASL=$$addr SLUICE_TEST_KAFKA_CA=$${SLUICE_KAFKA_DIR:-$${TMPDIR:-/tmp}/sluice-kafka}/tls/ca.pem \
	    $(GO) test -count=1 -v -run 'TestSASLBroker|TestKafkaSASLServer' ./kafka ./cmd/server; \
	  echo "test-kafka: SASL tests took $$(($$(date +%s) - t)) s"; \
	  t=$$(date +%s); $(KAFKA_SH) down; addr=$$($(KAFKA_SH) up --brokers 3); \
	  echo "test-kafka: 3-node cluster up at $$addr in $$(($$(date +%s) - t)) s"; \
	  t=$$(date +%s); SLUICE_TEST_KAFKA=$$addr SLUICE_TEST_KAFKA_NODES=3 $(GO) test -count=1 -timeout 15m -v -run 'TestClusterFaults' ./integration/...; \
	  echo "test-kafka: cluster tests took $$(($$(date +%s) - t)) s"

# The connector statements end to end (./integration/connect): a broker of
# its own (scripts/kafka.sh, port SLUICE_KAFKA_CONNECT_PORT, default
# 19692), a Kafka Connect worker with Debezium's PostgreSQL source and JDBC
# sink and a throw-away PostgreSQL (scripts/connect.sh, which fetches them
# from Maven Central and installs Debian's postgresql if missing): rows of
# a PostgreSQL table through Debezium into a Sluice TABLE, counted by a
# CTAS and upserted by the JDBC sink into PostgreSQL. All are stopped
# however it ends. Prints the time of each part and of the whole. Under
# CI=true a missing Java, PostgreSQL or plugin fails it.
CONNECT_SH := ./scripts/connect.sh
test-connect:
	@export SLUICE_KAFKA_PORT=$${SLUICE_KAFKA_CONNECT_PORT:-19692} SLUICE_KAFKA_DIR=$${TMPDIR:-/tmp}/sluice-kafka-connect; \
	  if $(KAFKA_SH) bootstrap >/dev/null 2>&1 || bash -c "exec 3<>/dev/tcp/127.0.0.1/$$SLUICE_KAFKA_PORT" 2>/dev/null; then \
	    echo "test-connect: a broker is up on port $$SLUICE_KAFKA_PORT already: stop it (scripts/kafka.sh down with its SLUICE_KAFKA_PORT and SLUICE_KAFKA_DIR) or set SLUICE_KAFKA_CONNECT_PORT"; exit 1; fi; \
	  trap '$(CONNECT_SH) down >/dev/null 2>&1 || true; $(CONNECT_SH) pg-down >/dev/null 2>&1 || true; $(KAFKA_SH) down >/dev/null 2>&1 || true' EXIT; set -e; \
	  all=$$(date +%s); t=$$all; $(KAFKA_SH) fetch; $(CONNECT_SH) fetch; \
	  echo "test-connect: fetch took $$(($$(date +%s) - t)) s"; \
	  t=$$(date +%s); addr=$$($(KAFKA_SH) up); pg=$$($(CONNECT_SH) pg-up); url=$$($(CONNECT_SH) up $$addr); \
	  echo "test-connect: broker at $$addr, PostgreSQL on port $$pg, Connect worker at $$url, up in $$(($$(date +%s) - t)) s"; \
	  t=$$(date +%s); out=$$(mktemp); \
	  status=0; SLUICE_TEST_CONNECT=$$url SLUICE_TEST_KAFKA=$$addr SLUICE_TEST_PG_PORT=$$pg \
	    $(GO) test -count=1 -timeout 10m -v ./integration/connect >$$out 2>&1 || status=$$?; cat $$out; \
	  if [ "$$status" = 0 ] && ! grep -q -- '--- PASS: TestConnectPipeline' $$out; then echo "test-connect: TestConnectPipeline did not run"; status=1; fi; \
	  rm -f $$out; [ "$$status" = 0 ] || { tail -40 $${SLUICE_CONNECT_DIR:-$${TMPDIR:-/tmp}/sluice-connect}/worker.log; exit $$status; }; \
	  echo "test-connect: the tests took $$(($$(date +%s) - t)) s"; \
	  echo "test-connect: took $$(($$(date +%s) - all)) s in all"

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

# Each fuzz target for FUZZTIME; seeds are read from ../shared/qtt at run
# time. The fuzzing runs on FUZZ_TOOLCHAIN (fetched by the go command from
# the module proxy, about 10 s on a new machine): Go 1.26's fuzz
# coordinator can fail a target with "context deadline exceeded" when
# -fuzztime ends while a worker is busy (golang/go#75804, fixed in 1.27).
FUZZTIME ?= 30s
FUZZ_TOOLCHAIN ?= go1.27.3
fuzz: GO := env GOTOOLCHAIN=$(FUZZ_TOOLCHAIN) $(GO)
fuzz:
	$(GO) test ./parser -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./internal/eval -run '^$$' -fuzz '^FuzzEval$$' -fuzztime $(FUZZTIME)
	$(GO) test ./format -run '^$$' -fuzz '^FuzzProtobufDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./format -run '^$$' -fuzz '^FuzzJSONDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./format -run '^$$' -fuzz '^FuzzDelimitedDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./format -run '^$$' -fuzz '^FuzzKafkaDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./format -run '^$$' -fuzz '^FuzzAvroDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./format -run '^$$' -fuzz '^FuzzJSONSRDecode$$' -fuzztime $(FUZZTIME)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Regenerates proto/ with the plugin versions pinned as tool lines in
# go.mod; needs protoc (Debian: protobuf-compiler).
proto:
	./scripts/protogen.sh

# Fails when the generated code in proto/ is not what regenerating gives
# (an edited .proto without `make proto`, or hand edits). The protoc version
# named in the files' headers may differ.
proto-check:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  PROTO_OUT="$$tmp" ./scripts/protogen.sh && \
	  for f in sluice.pb.go sluice_grpc.pb.go; do \
	    diff -u -I '^//.*protoc  *v[0-9]' proto/sluicev1/$$f "$$tmp/sluicev1/$$f" || { echo "proto/sluicev1/$$f is stale: run make proto"; exit 1; }; \
	  done; echo "proto: generated code is current"

release:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sluice-server ./cmd/server
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sluice ./cmd/cli

# Builds the release binaries and checks they are static: built with
# CGO_ENABLED=0 and, where file(1) is installed, statically linked.
release-check: release
	@for b in $(BIN)/sluice-server $(BIN)/sluice; do \
	  $(GO) version -m $$b | grep -q 'CGO_ENABLED=0' || { echo "$$b: not built with CGO_ENABLED=0"; exit 1; }; \
	  if command -v file >/dev/null; then \
	    file $$b | grep -Eq 'statically linked|static-pie linked' || { echo "$$b: not static: $$(file $$b)"; exit 1; }; \
	  fi; \
	  echo "$$b: static, $$($$b --version)"; \
	done

clean:
	rm -rf $(BIN)

# Nexmark on a Kafka broker of its own (scripts/kafka.sh): EVENTS events,
# QUERIES (comma-separated; default all), SYSTEMS (comma-separated from
# sluice, kstreams, flink; default all: the peers under bench/peers are
# built with Maven on first use). Prints the table and writes
# bench/out/latest.json and the Markdown table bench/out/latest.md.
# CPUPROFILE=dir writes a pprof CPU profile of Sluice's engine per query
# (dir/QUERY.prof; read it with go tool pprof -top). MEMPROFILE=dir writes
# a heap profile taken near the heap's peak (dir/QUERY.heap.prof) and
# prints the split of the engine's peak RSS.
EVENTS  ?= 1000000
QUERIES ?=
SYSTEMS ?=
bench:
	@set -e; export SLUICE_KAFKA_PORT=$${SLUICE_KAFKA_BENCH_PORT:-19192} SLUICE_KAFKA_DIR=$${TMPDIR:-/tmp}/sluice-kafka-bench; \
	  ./scripts/kafka.sh up >/dev/null; trap './scripts/kafka.sh down' EXIT; \
	  $(GO) run ./bench/nexmark/cmd/nexmark --bootstrap $$(./scripts/kafka.sh bootstrap) --events $(EVENTS) $(if $(QUERIES),--queries $(QUERIES)) $(if $(SYSTEMS),--systems $(SYSTEMS)) $(if $(CPUPROFILE),--cpuprofile $(CPUPROFILE)) $(if $(MEMPROFILE),--memprofile $(MEMPROFILE)) --out bench/out/latest.json

# Nexmark's latency mode on a Kafka broker of its own (scripts/kafka.sh,
# the bench target's port): RATE events per wall-second (default 10000)
# for SECONDS seconds (default 60; the first 10 are not measured),
# QUERIES (default q0,q7,q20), SYSTEMS (default all). Prints p50, p99 and
# the largest latency from an event's append to its result's, per query
# and system, and writes bench/out/latency.json and bench/out/latency.md.
RATE    ?= 10000
SECONDS ?= 60
latency:
	@set -e; export SLUICE_KAFKA_PORT=$${SLUICE_KAFKA_BENCH_PORT:-19192} SLUICE_KAFKA_DIR=$${TMPDIR:-/tmp}/sluice-kafka-bench; \
	  ./scripts/kafka.sh up >/dev/null; trap './scripts/kafka.sh down' EXIT; \
	  $(GO) run ./bench/nexmark/cmd/nexmark --bootstrap $$(./scripts/kafka.sh bootstrap) --latency --latency-rate $(RATE) --latency-seconds $(SECONDS) $(if $(QUERIES),--queries $(QUERIES)) $(if $(SYSTEMS),--systems $(SYSTEMS)) --out bench/out/latency.json

# The kill -9 harness (integration/crash) on a Kafka broker of its own
# (port SLUICE_KAFKA_CRASH_PORT, default 19792, so that it runs beside
# test-kafka's and bench's): builds bin/sluice-server, creates a filter, a
# windowed count with a grace period and a stream-table join, and kills
# the server CYCLES times (SIGKILL at a seeded record count, or a seeded
# failpoint) under the GUARANTEE given; then checks the outputs, read with
# read_committed, against the oracle. SEED replays a run. Fails when
# anything is missing or wrong (or, under exactly_once_v2, duplicated).
CYCLES    ?= 10
GUARANTEE ?= exactly_once_v2
SEED      ?=
crash:
	@export SLUICE_KAFKA_PORT=$${SLUICE_KAFKA_CRASH_PORT:-19792} SLUICE_KAFKA_DIR=$${TMPDIR:-/tmp}/sluice-kafka-crash-make; \
	  if $(KAFKA_SH) bootstrap >/dev/null 2>&1 || bash -c "exec 3<>/dev/tcp/127.0.0.1/$$SLUICE_KAFKA_PORT" 2>/dev/null; then \
	    echo "crash: a broker is up on port $$SLUICE_KAFKA_PORT already: stop it (scripts/kafka.sh down with its SLUICE_KAFKA_PORT and SLUICE_KAFKA_DIR) or set SLUICE_KAFKA_CRASH_PORT to a free port"; exit 1; fi; \
	  trap '$(KAFKA_SH) down >/dev/null 2>&1 || true' EXIT; set -e; \
	  $(GO) build -o $(BIN)/sluice-server ./cmd/server; \
	  t=$$(date +%s); addr=$$($(KAFKA_SH) up); \
	  echo "crash: broker up at $$addr in $$(($$(date +%s) - t)) s"; \
	  $(GO) run ./integration/crash --bootstrap $$addr --server $(BIN)/sluice-server \
	    --cycles $(CYCLES) --guarantee $(GUARANTEE) $(if $(SEED),--seed $(SEED))
