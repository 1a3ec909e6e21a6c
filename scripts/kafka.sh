#!/usr/bin/env bash
# kafka.sh runs Apache Kafka in KRaft mode on this machine, for Sluice's
# integration tests: fetched from Maven Central (org.apache.kafka:kafka_2.13
# and its dependencies, cached between runs), run with the machine's Java.
#
#   scripts/kafka.sh up [--brokers 1|3] [--sasl] [--tls]
#                                                  start; prints the bootstrap address
#   scripts/kafka.sh down                          stop every node, delete the data
#   scripts/kafka.sh kill N                        SIGKILL node N (1-based)
#   scripts/kafka.sh stop N                        stop node N gracefully
#   scripts/kafka.sh start N                       start node N again
#   scripts/kafka.sh bootstrap                     print the bootstrap address
#   scripts/kafka.sh controller                    print the active controller's node id
#   scripts/kafka.sh fetch                         only fetch the jars into the cache
#
# Each node is broker and controller. Node N listens for clients on
# 127.0.0.1:(SLUICE_KAFKA_PORT + 2(N-1)), default 19092, 19094, 19096 (the
# playground keeps 9092), and for the controller quorum on the port after
# it. With --brokers 3 topics get replication factor 3 and
# min.insync.replicas=2. With --sasl clients must authenticate with
# SASL_PLAINTEXT, PLAIN or SCRAM-SHA-512, as user "sluice" with password
# "sluice-secret" (brokers talk to each other on a separate plaintext
# listener, client port + 1000). With --tls the client listener speaks TLS
# (SSL, or SASL_SSL with --sasl) with a certificate for 127.0.0.1 signed by a
# CA made for the run: its PEM file is $SLUICE_KAFKA_DIR/tls/ca.pem, and
# client certificates signed by it (tls/client.pem, tls/client-key.pem) are
# accepted and asked for but not required.
#
# Environment: KAFKA_VERSION (4.4.0), SLUICE_KAFKA_CACHE (jar cache,
# ~/.cache/sluice/kafka-$KAFKA_VERSION), SLUICE_KAFKA_DIR (node data and
# logs, $TMPDIR/sluice-kafka), SLUICE_KAFKA_PORT (19092), KAFKA_HEAP (512m).
set -euo pipefail

version=${KAFKA_VERSION:-4.4.0}
cache=${SLUICE_KAFKA_CACHE:-$HOME/.cache/sluice/kafka-$version}
dir=${SLUICE_KAFKA_DIR:-${TMPDIR:-/tmp}/sluice-kafka}
base=${SLUICE_KAFKA_PORT:-19092}
heap=${KAFKA_HEAP:-512m}

die() { echo "kafka.sh: $*" >&2; exit 1; }

fetch() {
	if [ -f "$cache/libs/.complete" ]; then
		return
	fi
	command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch Kafka $version from Maven Central"
	mkdir -p "$cache"
	cat >"$cache/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>sluice.test</groupId>
  <artifactId>kafka-broker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$version</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$version</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>2.0.17</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId><version>2.25.5</version></dependency>
  </dependencies>
</project>
EOF
	echo "kafka.sh: fetching Kafka $version from Maven Central into $cache" >&2
	rm -rf "$cache/libs"
	mvn -q -B -f "$cache/pom.xml" dependency:copy-dependencies \
		-DoutputDirectory="$cache/libs" -DincludeScope=runtime >&2 ||
		die "could not fetch org.apache.kafka:kafka_2.13:$version"
	touch "$cache/libs/.complete"
}

kafka_java() {
	java -Xmx"$heap" -Xms128m -XX:+UseG1GC \
		-Dlog4j2.configurationFile="$dir/log4j2.properties" \
		-cp "$cache/libs/*" "$@"
}

client_port() { echo $((base + 2 * ($1 - 1))); }
controller_port() { echo $((base + 2 * ($1 - 1) + 1)); }
internal_port() { echo $((base + 1000 + 2 * ($1 - 1))); }

nodes() { cat "$dir/nodes" 2>/dev/null || echo 0; }

bootstrap() {
	local n out=""
	n=$(nodes)
	[ "$n" -gt 0 ] || die "not up; run scripts/kafka.sh up"
	for i in $(seq 1 "$n"); do
		out="$out${out:+,}127.0.0.1:$(client_port "$i")"
	done
	echo "$out"
}

# make_tls writes a CA, a broker certificate for 127.0.0.1 and a client
# certificate, in PEM, under $dir/tls.
make_tls() {
	command -v openssl >/dev/null || die "--tls needs openssl"
	local t=$dir/tls
	mkdir -p "$t"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=sluice test CA" \
		-keyout "$t/ca-key.pem" -out "$t/ca.pem" 2>/dev/null
	for who in broker client; do
		openssl req -newkey rsa:2048 -nodes -subj "/CN=$who" \
			-keyout "$t/$who-key.rsa" -out "$t/$who.csr" 2>/dev/null
		printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$t/$who.ext"
		openssl x509 -req -in "$t/$who.csr" -CA "$t/ca.pem" -CAkey "$t/ca-key.pem" -CAcreateserial \
			-days 2 -extfile "$t/$who.ext" -out "$t/$who.pem" 2>/dev/null
		openssl pkcs8 -topk8 -nocrypt -in "$t/$who-key.rsa" -out "$t/$who-key.pem"
	done
	cat "$t/broker-key.pem" "$t/broker.pem" >"$t/broker-keystore.pem"
}

write_config() { # node count sasl tls
	local i=$1 n=$2 sasl=$3 tls=$4 voters="" rf=1 isr=1 proto=PLAINTEXT
	for j in $(seq 1 "$n"); do
		voters="$voters${voters:+,}$j@127.0.0.1:$(controller_port "$j")"
	done
	if [ "$n" -ge 3 ]; then
		rf=3 isr=2
	fi
	mkdir -p "$dir/node$i"
	{
		echo "process.roles=broker,controller"
		echo "node.id=$i"
		echo "controller.quorum.voters=$voters"
		echo "controller.listener.names=CONTROLLER"
		if [ "$sasl" = 1 ] && [ "$tls" = 1 ]; then
			proto=SASL_SSL
		elif [ "$sasl" = 1 ]; then
			proto=SASL_PLAINTEXT
		elif [ "$tls" = 1 ]; then
			proto=SSL
		fi
		echo "listeners=EXTERNAL://127.0.0.1:$(client_port "$i"),INTERNAL://127.0.0.1:$(internal_port "$i"),CONTROLLER://127.0.0.1:$(controller_port "$i")"
		echo "advertised.listeners=EXTERNAL://127.0.0.1:$(client_port "$i"),INTERNAL://127.0.0.1:$(internal_port "$i")"
		echo "listener.security.protocol.map=EXTERNAL:$proto,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT"
		echo "inter.broker.listener.name=INTERNAL"
		if [ "$sasl" = 1 ]; then
			echo "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512"
			echo "listener.name.external.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512"
			echo 'listener.name.external.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_sluice="sluice-secret";'
			echo 'listener.name.external.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;'
		fi
		if [ "$tls" = 1 ]; then
			echo "listener.name.external.ssl.keystore.type=PEM"
			echo "listener.name.external.ssl.keystore.location=$dir/tls/broker-keystore.pem"
			echo "listener.name.external.ssl.truststore.type=PEM"
			echo "listener.name.external.ssl.truststore.location=$dir/tls/ca.pem"
			echo "listener.name.external.ssl.client.auth=requested"
		fi
		echo "log.dirs=$dir/node$i/data"
		echo "num.partitions=1"
		echo "default.replication.factor=$rf"
		echo "min.insync.replicas=$isr"
		echo "offsets.topic.replication.factor=$rf"
		echo "offsets.topic.num.partitions=4"
		echo "transaction.state.log.replication.factor=$rf"
		echo "transaction.state.log.min.isr=$isr"
		echo "transaction.state.log.num.partitions=4"
		echo "group.initial.rebalance.delay.ms=0"
		echo "auto.create.topics.enable=false"
		echo "log.segment.bytes=16777216"
		echo "unclean.leader.election.enable=false"
	} >"$dir/node$i/server.properties"
}

start_node() {
	local i=$1
	[ -f "$dir/node$i/server.properties" ] || die "node $i is not configured"
	if [ -f "$dir/node$i/pid" ] && kill -0 "$(cat "$dir/node$i/pid")" 2>/dev/null; then
		die "node $i is already running"
	fi
	: >"$dir/node$i/server.log"
	setsid nohup bash -c "exec java -Xmx$heap -Xms128m -XX:+UseG1GC -Dlog4j2.configurationFile='$dir/log4j2.properties' -Dkafka.logs.dir='$dir/node$i' -cp '$cache/libs/*' kafka.Kafka '$dir/node$i/server.properties'" \
		>>"$dir/node$i/server.log" 2>&1 </dev/null &
	echo $! >"$dir/node$i/pid"
}

wait_node() {
	local i=$1 deadline=$((SECONDS + 90))
	until grep -q "Kafka Server started" "$dir/node$i/server.log" 2>/dev/null; do
		if ! kill -0 "$(cat "$dir/node$i/pid")" 2>/dev/null; then
			tail -30 "$dir/node$i/server.log" >&2 || true
			die "node $i exited while starting (log: $dir/node$i/server.log)"
		fi
		if [ $SECONDS -ge $deadline ]; then
			tail -30 "$dir/node$i/server.log" >&2 || true
			die "node $i did not start within 90 s (log: $dir/node$i/server.log)"
		fi
		sleep 0.2
	done
}

stop_node() { # node signal
	local i=$1 sig=$2 pid deadline
	[ -f "$dir/node$i/pid" ] || return 0
	pid=$(cat "$dir/node$i/pid")
	kill -"$sig" "$pid" 2>/dev/null || true
	deadline=$((SECONDS + 60))
	while kill -0 "$pid" 2>/dev/null; do
		if [ $SECONDS -ge $deadline ]; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
		sleep 0.1
	done
	rm -f "$dir/node$i/pid"
}

up() {
	local n=1 sasl=0 tls=0
	while [ $# -gt 0 ]; do
		case $1 in
		--tls) tls=1; shift ;;
		--brokers) n=${2:?--brokers needs a count}; shift 2 ;;
		--brokers=*) n=${1#*=}; shift ;;
		--sasl) sasl=1; shift ;;
		*) die "up: unknown flag $1" ;;
		esac
	done
	case $n in 1 | 3) ;; *) die "up: --brokers takes 1 or 3" ;; esac
	command -v java >/dev/null || die "Java is needed to run Kafka"
	if [ "$(nodes)" -gt 0 ]; then
		die "already up in $dir; run scripts/kafka.sh down first"
	fi
	fetch
	rm -rf "$dir"
	mkdir -p "$dir"
	cat >"$dir/log4j2.properties" <<'EOF'
rootLogger.level=INFO
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
logger.kafka.name=kafka
logger.kafka.level=INFO
logger.apache.name=org.apache.kafka
logger.apache.level=WARN
logger.request.name=kafka.request.logger
logger.request.level=WARN
EOF
	if [ "$tls" = 1 ]; then
		make_tls
	fi
	local cluster
	cluster=$(kafka_java kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
	for i in $(seq 1 "$n"); do
		write_config "$i" "$n" "$sasl" "$tls"
		local extra=()
		if [ "$sasl" = 1 ]; then
			extra=(--add-scram 'SCRAM-SHA-512=[name=sluice,password=sluice-secret]')
		fi
		kafka_java kafka.tools.StorageTool format -t "$cluster" -c "$dir/node$i/server.properties" "${extra[@]}" >"$dir/node$i/format.log" 2>&1 ||
			{ cat "$dir/node$i/format.log" >&2; die "formatting node $i failed"; }
	done
	echo "$n" >"$dir/nodes"
	echo "$sasl" >"$dir/sasl"
	for i in $(seq 1 "$n"); do
		start_node "$i"
	done
	for i in $(seq 1 "$n"); do
		wait_node "$i"
	done
	bootstrap
}

down() {
	local n
	n=$(nodes)
	for i in $(seq 1 "$n"); do
		stop_node "$i" TERM
	done
	rm -rf "$dir"
}

# controller prints the node id of the active controller: the leader of
# the metadata quorum with the highest epoch in the nodes' quorum-state
# files (the election's log lines are below the log level kept).
controller() {
	local n best="" epoch=-1 state id e
	n=$(nodes)
	for i in $(seq 1 "$n"); do
		state=$(cat "$dir/node$i/data/__cluster_metadata-0/quorum-state" 2>/dev/null || true)
		id=$(echo "$state" | sed -n 's/.*"leaderId":\(-\{0,1\}[0-9]*\).*/\1/p')
		e=$(echo "$state" | sed -n 's/.*"leaderEpoch":\([0-9]*\).*/\1/p')
		if [ -n "$id" ] && [ -n "$e" ] && [ "$id" -ge 1 ] && [ "$e" -gt "$epoch" ]; then
			best=$id epoch=$e
		fi
	done
	[ -n "$best" ] || die "no active controller found in the nodes' quorum-state"
	echo "$best"
}

cmd=${1:-}
shift || true
case $cmd in
up) up "$@" ;;
down) down ;;
kill) stop_node "${1:?kill needs a node number}" KILL ;;
stop) stop_node "${1:?stop needs a node number}" TERM ;;
start) start_node "${1:?start needs a node number}"; wait_node "$1" ;;
bootstrap) bootstrap ;;
controller) controller ;;
fetch) fetch ;;
*) sed -n '2,24p' "$0" >&2; exit 2 ;;
esac
