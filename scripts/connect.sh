#!/usr/bin/env bash
# connect.sh runs a Kafka Connect worker and a throw-away PostgreSQL for
# Sluice's connector tests (make test-connect), beside the broker that
# scripts/kafka.sh runs. Everything is fetched from Maven Central and cached
# between runs: org.apache.kafka:connect-runtime and connect-json for the
# worker, and two Debezium plugins, each in a plugin directory of its own
# with its dependencies: the PostgreSQL source
# (io.debezium:debezium-connector-postgres) and the JDBC sink
# (io.debezium:debezium-connector-jdbc).
#
#   scripts/connect.sh fetch                 only fetch the jars into the cache
#   scripts/connect.sh up BOOTSTRAP          start a distributed worker on the
#                                            broker(s) BOOTSTRAP; prints its REST URL
#   scripts/connect.sh down                  stop the worker, delete its files
#   scripts/connect.sh url                   print the worker's REST URL
#   scripts/connect.sh pg-up                 start PostgreSQL; prints its port
#   scripts/connect.sh pg-down               stop PostgreSQL, delete its cluster
#   scripts/connect.sh pg-port               print PostgreSQL's port
#   scripts/connect.sh psql ARGS...          psql against it, as user postgres
#
# The worker runs in distributed mode with its config, offset and status
# topics named connect-configs, connect-offsets and connect-status
# (SLUICE_CONNECT_GROUP prefixes them when set), replication factor 1, on a
# free port. Its converters default to Kafka's JsonConverter; each
# connector sets its own.
#
# PostgreSQL is the machine's (Debian's postgresql package): a cluster made
# with initdb in a temporary directory, owned by and run as the postgres
# user (initdb refuses root), with wal_level=logical for Debezium, on a
# free port of 127.0.0.1, trusting local connections. pg-up installs the
# package with apt-get when it is missing and this runs as root.
#
# Environment: CONNECT_VERSION (4.4.0), DEBEZIUM_VERSION (3.6.1.Final, the
# PostgreSQL source), DEBEZIUM_JDBC_VERSION (3.4.0.Final, the JDBC sink:
# Maven Central does not serve its 3.6.1.Final), SLUICE_CONNECT_CACHE
# (~/.cache/sluice/connect-$CONNECT_VERSION), SLUICE_CONNECT_DIR (worker
# files, $TMPDIR/sluice-connect), SLUICE_PG_DIR ($TMPDIR/sluice-pg),
# CONNECT_HEAP (768m).
set -euo pipefail

version=${CONNECT_VERSION:-4.4.0}
dbz=${DEBEZIUM_VERSION:-3.6.1.Final}
# The JDBC sink's 3.6.1.Final is not served by Maven Central (tried); its
# 3.4.0.Final is.
dbz_jdbc=${DEBEZIUM_JDBC_VERSION:-3.4.0.Final}
cache=${SLUICE_CONNECT_CACHE:-$HOME/.cache/sluice/connect-$version}
dir=${SLUICE_CONNECT_DIR:-${TMPDIR:-/tmp}/sluice-connect}
pgdir=${SLUICE_PG_DIR:-${TMPDIR:-/tmp}/sluice-pg}
heap=${CONNECT_HEAP:-768m}
group=${SLUICE_CONNECT_GROUP:-}

die() { echo "connect.sh: $*" >&2; exit 1; }

# free_port prints a TCP port of 127.0.0.1 that nothing listens on.
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 20000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free port found"
}

# resolve DIR GROUP:ARTIFACT:VERSION [runtime|compile]: copies the artifact
# and its runtime dependencies into DIR/libs, through a pom of its own.
resolve() {
	local d=$1 gav=$2 g a v
	IFS=: read -r g a v <<<"$gav"
	mkdir -p "$d"
	cat >"$d/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>sluice.test</groupId>
  <artifactId>$a-bundle</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>
$(shift 2; for extra in "$@"; do IFS=: read -r eg ea ev <<<"$extra"; echo "    <dependency><groupId>$eg</groupId><artifactId>$ea</artifactId><version>$ev</version></dependency>"; done)
  </dependencies>
</project>
EOF
	rm -rf "$d/libs"
	mvn -q -B -f "$d/pom.xml" dependency:copy-dependencies \
		-DoutputDirectory="$d/libs" -DincludeScope=runtime >"$d/mvn.log" 2>&1
}

# debezium_kafka prints the Kafka version Debezium VERSION was built with,
# from its build parent's pom in the local Maven repository.
debezium_kafka() {
	local repo=${MAVEN_REPO:-$HOME/.m2/repository}
	sed -n 's:.*<version.kafka>\(.*\)</version.kafka>.*:\1:p' \
		"$repo/io/debezium/debezium-build-parent/$1/debezium-build-parent-$1.pom" 2>/dev/null | head -1
}

fetch() {
	if [ -f "$cache/.complete" ]; then
		return
	fi
	command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch Kafka Connect $version from Maven Central"
	mkdir -p "$cache"
	echo "connect.sh: fetching Kafka Connect $version and Debezium from Maven Central into $cache" >&2
	resolve "$cache/runtime" "org.apache.kafka:connect-runtime:$version" \
		"org.apache.kafka:connect-json:$version" "org.apache.kafka:connect-transforms:$version" \
		"org.slf4j:slf4j-api:2.0.17" "org.apache.logging.log4j:log4j-slf4j2-impl:2.25.5" ||
		{ cat "$cache/runtime/mvn.log" >&2; die "could not fetch org.apache.kafka:connect-runtime:$version"; }
	resolve "$cache/plugins-src/debezium-postgres" "io.debezium:debezium-connector-postgres:$dbz" ||
		{ cat "$cache/plugins-src/debezium-postgres/mvn.log" >&2; die "could not fetch io.debezium:debezium-connector-postgres:$dbz"; }
	resolve "$cache/plugins-src/debezium-jdbc" "io.debezium:debezium-connector-jdbc:$dbz_jdbc" ||
		{ cat "$cache/plugins-src/debezium-jdbc/mvn.log" >&2; die "could not fetch io.debezium:debezium-connector-jdbc:$dbz_jdbc"; }
	# Each plugin directory holds its jars but not those of the worker's
	# own API (Connect isolates plugins and shares its API with them), nor
	# Jackson: the worker's Jackson modules are found by the plugins'
	# ServiceLoader too (Hibernate, in the JDBC sink, registers every
	# module it finds), and a plugin's own jackson-databind does not take
	# them...
	rm -rf "$cache/plugins"
	local p v kv
	for p in debezium-postgres:$dbz debezium-jdbc:$dbz_jdbc; do
		v=${p#*:} p=${p%%:*}
		mkdir -p "$cache/plugins/$p"
		for j in "$cache/plugins-src/$p/libs/"*.jar; do
			case $(basename "$j") in
			connect-api-* | kafka-clients-* | slf4j-api-* | connect-runtime-* | connect-json-* | connect-transforms-* | jackson-*) ;;
			*) cp "$j" "$cache/plugins/$p/" ;;
			esac
		done
		# ...but for the kafka-clients the plugin was built with, whose
		# classes a later Kafka moved (Debezium 3.6 on Kafka 4.3 uses
		# org.apache.kafka.common.utils.Sanitizer, which Kafka 4.4 moved to
		# .internals): the worker's classes come first, and a plugin finds
		# in its own directory only those the worker lacks.
		kv=$(debezium_kafka "$v")
		if [ -n "$kv" ] && [ "$kv" != "$version" ]; then
			mvn -q -B dependency:copy -Dartifact="org.apache.kafka:kafka-clients:$kv" -Dtransitive=false \
				-DoutputDirectory="$cache/plugins/$p" >>"$cache/plugins-src/$p/mvn.log" 2>&1 ||
				{ cat "$cache/plugins-src/$p/mvn.log" >&2; die "could not fetch org.apache.kafka:kafka-clients:$kv for $p"; }
		fi
	done
	echo "debezium-connector-postgres $dbz" >"$cache/versions"
	echo "debezium-connector-jdbc $dbz_jdbc" >>"$cache/versions"
	touch "$cache/.complete"
}

url() {
	[ -f "$dir/port" ] || die "not up; run scripts/connect.sh up BOOTSTRAP"
	echo "http://127.0.0.1:$(cat "$dir/port")"
}

up() {
	local bootstrap=${1:?up needs the broker bootstrap address, e.g. \$(scripts/kafka.sh bootstrap)}
	command -v java >/dev/null || die "Java (17 or later) is needed to run Kafka Connect"
	command -v curl >/dev/null || die "curl is needed to see the worker's REST API come up (Debian: apt-get install curl)"
	if [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
		die "already up in $dir; run scripts/connect.sh down first"
	fi
	fetch
	rm -rf "$dir"
	mkdir -p "$dir"
	local port
	port=$(free_port)
	cat >"$dir/log4j2.properties" <<'EOF'
rootLogger.level=INFO
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
logger.kafka.name=org.apache.kafka
logger.kafka.level=WARN
logger.connect.name=org.apache.kafka.connect.runtime.rest
logger.connect.level=INFO
logger.worker.name=org.apache.kafka.connect.runtime.Worker
logger.worker.level=INFO
logger.debezium.name=io.debezium
logger.debezium.level=INFO
EOF
	cat >"$dir/worker.properties" <<EOF
bootstrap.servers=$bootstrap
group.id=${group}sluice-connect
config.storage.topic=${group}connect-configs
offset.storage.topic=${group}connect-offsets
status.storage.topic=${group}connect-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
offset.storage.partitions=1
status.storage.replication.factor=1
status.storage.partitions=1
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=true
value.converter.schemas.enable=true
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:$port
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$port
plugin.path=$cache/plugins
plugin.discovery=hybrid_warn
scheduled.rebalance.max.delay.ms=0
task.shutdown.graceful.timeout.ms=2000
EOF
	echo "$port" >"$dir/port"
	setsid nohup bash -c "exec java -Xmx$heap -Xms128m -XX:+UseG1GC -Dlog4j2.configurationFile='$dir/log4j2.properties' -cp '$cache/runtime/libs/*' org.apache.kafka.connect.cli.ConnectDistributed '$dir/worker.properties'" \
		>"$dir/worker.log" 2>&1 </dev/null &
	echo $! >"$dir/pid"
	local deadline=$((SECONDS + 120))
	until curl -fsS "http://127.0.0.1:$port/connectors" >/dev/null 2>&1; do
		if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
			tail -40 "$dir/worker.log" >&2 || true
			die "the worker exited while starting (log: $dir/worker.log)"
		fi
		if [ $SECONDS -ge $deadline ]; then
			tail -40 "$dir/worker.log" >&2 || true
			die "the worker did not answer within 120 s (log: $dir/worker.log)"
		fi
		sleep 0.3
	done
	url
}

down() {
	if [ -f "$dir/pid" ]; then
		local pid deadline
		pid=$(cat "$dir/pid")
		kill -TERM "$pid" 2>/dev/null || true
		deadline=$((SECONDS + 30))
		while kill -0 "$pid" 2>/dev/null; do
			if [ $SECONDS -ge $deadline ]; then
				kill -KILL "$pid" 2>/dev/null || true
			fi
			sleep 0.1
		done
	fi
	rm -rf "$dir"
}

pg_bin() {
	local b
	for b in /usr/lib/postgresql/*/bin; do
		if [ -x "$b/initdb" ]; then
			echo "$b"
			return
		fi
	done
	return 1
}

as_postgres() {
	if [ "$(id -u)" = 0 ]; then
		su postgres -s /bin/sh -c "$*"
	elif [ "$(id -un)" = postgres ]; then
		sh -c "$*"
	else
		die "PostgreSQL runs as the postgres user: run this as root or as postgres"
	fi
}

pg_up() {
	local bin
	if ! bin=$(pg_bin); then
		if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
			echo "connect.sh: installing Debian's postgresql" >&2
			apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 ||
				die "could not install postgresql"
			bin=$(pg_bin) || die "postgresql installed but no initdb found"
		else
			die "PostgreSQL's server is not installed (Debian: apt-get install postgresql)"
		fi
	fi
	id postgres >/dev/null 2>&1 || die "there is no postgres user (Debian's postgresql package makes one)"
	if [ -f "$pgdir/port" ] && as_postgres "$bin/pg_ctl -D '$pgdir/data' status" >/dev/null 2>&1; then
		die "PostgreSQL is already up in $pgdir; run scripts/connect.sh pg-down first"
	fi
	rm -rf "$pgdir"
	mkdir -p "$pgdir"
	chown postgres "$pgdir" 2>/dev/null || true
	local port
	port=$(free_port)
	as_postgres "$bin/initdb -D '$pgdir/data' -U postgres -A trust -E UTF8 --no-sync" >"$pgdir/initdb.log" 2>&1 ||
		{ cat "$pgdir/initdb.log" >&2; die "initdb failed"; }
	cat >>"$pgdir/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$pgdir'
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
fsync = off
EOF
	echo "$port" >"$pgdir/port"
	as_postgres "$bin/pg_ctl -D '$pgdir/data' -l '$pgdir/server.log' -w -t 60 start" >/dev/null ||
		{ cat "$pgdir/server.log" >&2; die "PostgreSQL did not start"; }
	echo "$port"
}

pg_down() {
	local bin
	if [ -d "$pgdir/data" ] && bin=$(pg_bin); then
		as_postgres "$bin/pg_ctl -D '$pgdir/data' -m immediate -w stop" >/dev/null 2>&1 || true
	fi
	rm -rf "$pgdir"
}

pg_port() {
	[ -f "$pgdir/port" ] || die "PostgreSQL is not up; run scripts/connect.sh pg-up"
	cat "$pgdir/port"
}

cmd=${1:-}
shift || true
case $cmd in
fetch) fetch ;;
up) up "$@" ;;
down) down ;;
url) url ;;
pg-up) pg_up ;;
pg-down) pg_down ;;
pg-port) pg_port ;;
psql) psql -h 127.0.0.1 -p "$(pg_port)" -U postgres -v ON_ERROR_STOP=1 "$@" ;;
*) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
