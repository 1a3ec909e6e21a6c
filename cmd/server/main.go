package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/registry"
	"github.com/sluice-sql/sluice/server"
	serverconfig "github.com/sluice-sql/sluice/server/config"
	"github.com/sluice-sql/sluice/server/headless"
	"github.com/sluice-sql/sluice/server/health"
	"github.com/sluice-sql/sluice/server/metrics"
	"github.com/sluice-sql/sluice/server/rest"
)

// version is set at build time with -ldflags "-X main.version=..."; left
// at dev, the build's own stamp stands for it (see buildVersion).
var version = "dev"

func init() { version = buildVersion(version, debug.ReadBuildInfo) }

// buildVersion is the version the server reports (--version, /info, the
// Info call, metrics): set, as the release build sets it; else the module
// version the go command stamped; else dev with the commit it was built
// from (and +dirty for a tree with changes).
func buildVersion(set string, read func() (*debug.BuildInfo, bool)) string {
	if set != "dev" {
		return set
	}
	info, ok := read()
	if !ok {
		return set
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return strings.TrimPrefix(v, "v")
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return set
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return set + "-" + rev
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills the process
	}()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "sluice-server:", err)
		}
		os.Exit(1)
	}
}

// addrs are the addresses of a started server.
type addrs struct {
	// GRPC is the gRPC API's address.
	GRPC string
	// HTTP is the HTTP listener's address (REST, probes, metrics).
	HTTP string
	// Kafka is the playground broker's address; empty when the server uses
	// an outside Kafka cluster.
	Kafka string
	// Registry is the built-in schema registry's address; empty when the
	// server serves none.
	Registry string
	// Services are the gRPC services served, with their methods.
	Services map[string]grpc.ServiceInfo
}

// config is the server's settings, from flags, the environment and a
// properties file (see package server/config).
type config struct {
	grpcAddr       string
	httpAddr       string
	dataDir        string
	bootstrap      []string
	kafkaClient    string
	playgroundAddr string
	// registryURL is an outside schema registry; registryAddr where the
	// playground serves its built-in one when there is none.
	registryURL  string
	registryAddr string
	serviceID    string
	// guarantee is the processing.guarantee of new persistent queries,
	// canonical; guaranteeDeprecated says it was given as exactly_once.
	guarantee           string
	guaranteeDeprecated bool
	logLevel            slog.Level
	logFormat           string
	shutdownTimeout     time.Duration
	queriesFile         string
	cluster             bool
	advertised          string
	sessionTimeout      time.Duration
	tlsCert             string
	tlsKey              string
	tlsClientCA         string
	usersFile           string
	user                string
	password            string
	version             bool
	// kafkaSec are the Kafka TLS and SASL settings; kafka holds the
	// resulting TLS and SASL configuration.
	kafkaSec kafkaSecurity
	kafka    kafka.Config
	// connect is how the server reaches a Kafka Connect worker.
	connect connectSettings
	// sources says where each setting not at its default came from;
	// ignored are the config file's keys that are not Sluice's.
	sources map[string]string
	ignored []string
	// maxRecordBytes is the default sluice.max.record.bytes.
	maxRecordBytes int
	// readOnlyTopics is ksql.readonly.topics, parsed.
	readOnlyTopics []string
	// memoryLimit is the Go runtime's soft memory limit in bytes, 0 for
	// none; gcPercent its GC target, negative to leave GOGC's.
	memoryLimit int64
	gcPercent   int
	// stateMemory is the state memory budget in bytes (Config.StateMemory),
	// 0 for engine.StateMemoryFor(memoryLimit).
	stateMemory int64
	// statementTimeout bounds a statement's run, 0 for none;
	// httpReadTimeout the arrival of a REST request's body;
	// insertsIdleTimeout the gap between two rows of /inserts-stream.
	statementTimeout   time.Duration
	httpReadTimeout    time.Duration
	insertsIdleTimeout time.Duration
	// maxPushQueries is ksql.max.push.queries; 0 refuses every push query.
	maxPushQueries int
	// pushV2 is ksql.query.push.v2.enabled: scalable push queries.
	pushV2 bool
}

// aliases map ksqlDB's property names (ksql-server.properties) to flags.
var aliases = map[string]serverconfig.Alias{
	"bootstrap.servers": {Flag: "bootstrap-servers"},
	"ksql.service.id":   {Flag: "service-id"},
	"listeners":         {Flag: "http", Convert: serverconfig.StripScheme},
	"ksql.queries.file": {Flag: "queries-file"},
	// Kafka Streams' name, and ksqlDB's for the same setting.
	"processing.guarantee":              {Flag: "processing-guarantee"},
	"ksql.streams.processing.guarantee": {Flag: "processing-guarantee"},
	"ksql.advertised.listener":          {Flag: "advertised-address", Convert: serverconfig.StripScheme},
	"ksql.schema.registry.url":          {Flag: "schema-registry-url"},
	"sluice.max.record.bytes":           {Flag: "max-record-bytes"},
	"ksql.readonly.topics":              {Flag: "readonly-topics"},
	"ksql.max.push.queries":             {Flag: "max-push-queries"},
	"ksql.query.push.v2.enabled":        {Flag: "push-v2-enabled"},
}

// configProperty resolves a key of the config file that names no flag as
// ksqlDB takes the names of its ksql-server.properties (see
// engine.ConfigProperty): a name ksqlDB does not know is refused with its
// message, and so is a value Sluice does not run of a property it uses.
func configProperty(key, value string) (string, error) {
	canonical, _, err := engine.ConfigProperty(key)
	if err != nil {
		return "", err
	}
	if err := engine.CheckPropertyValue(canonical, value); err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return canonical, nil
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	return parseConfig(args, os.Getenv, stderr)
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("sluice-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var bootstrap, level, cfgFile string
	fs.StringVar(&cfgFile, "config", "", "properties `file` with settings (key=value lines; ksqlDB's ksql-server.properties names such as bootstrap.servers, ksql.service.id and listeners are understood)")
	fs.StringVar(&c.grpcAddr, "grpc", "127.0.0.1:8089", "`address` of the gRPC API")
	fs.StringVar(&c.httpAddr, "http", "127.0.0.1:8088", "`address` of the HTTP listener: REST API, /livez, /readyz, /metrics")
	fs.StringVar(&c.dataDir, "data-dir", "./sluice-data", "`directory` for local state (and the playground's topics)")
	fs.StringVar(&bootstrap, "bootstrap-servers", "", "comma-separated Kafka `brokers`; empty runs a playground broker")
	fs.StringVar(&c.kafkaClient, "kafka-client", "franz", "Kafka client library: franz or sarama")
	fs.StringVar(&c.playgroundAddr, "playground-addr", "127.0.0.1:9092", "`address` of the playground broker")
	fs.StringVar(&c.registryURL, "schema-registry-url", "", "`URL` of a schema registry speaking Confluent's REST API, for the AVRO, PROTOBUF and JSON_SR formats (credentials as https://user:password@host:8081); empty with the playground serves the built-in one on --schema-registry-addr")
	fs.StringVar(&c.registryAddr, "schema-registry-addr", "127.0.0.1:8081", "`address` the playground serves its built-in schema registry on, when --schema-registry-url is not given")
	fs.StringVar(&c.serviceID, "service-id", "sluice", "`id` of the Sluice cluster; prefixes its internal topics and groups")
	fs.StringVar(&c.guarantee, "processing-guarantee", engine.AtLeastOnce, "default processing `guarantee` of persistent queries: at_least_once or exactly_once_v2 (Kafka transactions; needs --kafka-client franz)")
	fs.IntVar(&c.maxRecordBytes, "max-record-bytes", engine.DefaultMaxRecordBytes, "largest record (key and value `bytes`) a persistent query reads; larger ones go to the processing log (sluice.max.record.bytes)")
	readOnly := strings.Join(engine.DefaultReadOnlyTopics, ",")
	fs.StringVar(&readOnly, "readonly-topics", readOnly, "comma-separated regular `expressions`, each matching whole topic names, of topics no statement registers a source over, writes, PRINTs or deletes (ksql.readonly.topics); the server's own topics (_sluice-*, the built-in registry's journal) are protected whatever it says")
	var memoryLimit string
	fs.StringVar(&memoryLimit, "memory-limit", "", "soft memory `limit` of the process (512MiB, 2GiB): the Go runtime collects garbage more often as memory nears it, and the persistent queries keep a quarter of it of state in memory beside the state store (32MiB without a limit; --state-memory sets it); empty for none (or GOMEMLIMIT's)")
	var stateMemory string
	fs.StringVar(&stateMemory, "state-memory", "", "`bytes` of state the persistent queries keep in memory beside the state store, all tasks together (64MiB); empty for a quarter of --memory-limit, or 32MiB without a limit")
	fs.IntVar(&c.gcPercent, "gc-percent", engine.DefaultGCPercent, "garbage collector `target`: the heap grows by this percentage of the live data between collections (Go's GOGC, which wins when this is not given)")
	fs.StringVar(&level, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log `format`: text or json")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long calls in progress may take to finish on shutdown")
	fs.DurationVar(&c.statementTimeout, "statement-timeout", engine.DefaultStatementTimeout, "how long a statement may run before the server stops it, with nothing applied, unless it has committed (0 for no limit); a push query's stream is not bounded by it")
	fs.DurationVar(&c.httpReadTimeout, "http-read-timeout", rest.DefaultReadTimeout, "how long a REST request's headers and body may take to arrive (the first line of an /inserts-stream request); idle kept-alive HTTP connections close after it too")
	fs.DurationVar(&c.insertsIdleTimeout, "inserts-idle-timeout", rest.DefaultInsertsIdleTimeout, "how long an /inserts-stream request may wait for its next row before the server closes it")
	fs.IntVar(&c.maxPushQueries, "max-push-queries", engine.DefaultMaxPushQueries, "most push queries (and PRINTs) running at once over REST, gRPC and the shell together; 0 refuses every push query (ksql.max.push.queries)")
	fs.BoolVar(&c.pushV2, "push-v2-enabled", false, "serve push queries that qualify from the rows of the persistent query writing their source (scalable push queries, ksql.query.push.v2.enabled); a session or request setting the property overrides it")
	fs.StringVar(&c.queriesFile, "queries-file", "", "headless mode: run the statements of this `file` at start and refuse interactive statements")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate `file`: serve HTTP and gRPC over TLS")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key `file` of --tls-cert")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", "", "PEM CA `bundle`: require client certificates it signed (mutual TLS)")
	fs.StringVar(&c.usersFile, "auth-users-file", "", "require HTTP basic authentication with the users of this `file` (\"user: password[,role ...]\" lines, ksqlDB's password file format)")
	fs.StringVar(&c.user, "auth-user", "", "require HTTP basic authentication as this `user` (with --auth-password or SLUICE_AUTH_PASSWORD)")
	fs.StringVar(&c.password, "auth-password", "", "password of --auth-user; prefer the SLUICE_AUTH_PASSWORD environment variable, which ps does not show")
	fs.BoolVar(&c.cluster, "cluster", false, "run as one server of a cluster: the servers with the same --service-id split the partitions of every persistent query and forward pull queries to each other (needs --bootstrap-servers and the franz client)")
	fs.StringVar(&c.advertised, "advertised-address", "", "`address` (host:port of the gRPC API) the other servers of a --cluster reach this one at; default the gRPC listen address")
	fs.DurationVar(&c.sessionTimeout, "cluster-session-timeout", 6*time.Second, "how long a --cluster waits for a silent server before moving its partitions to the others")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	c.kafkaSec.register(fs)
	c.connect.register(fs)
	all := maps.Clone(aliases)
	for k, f := range kafkaAliases {
		all[k] = serverconfig.Alias{Flag: f}
	}
	for k, f := range connectAliases {
		all[k] = serverconfig.Alias{Flag: f}
	}
	all["ksql.connect.request.timeout.ms"] = serverconfig.Alias{Flag: "connect-timeout", Convert: millis}
	loader := &serverconfig.Loader{EnvPrefix: "SLUICE_", ConfigFlag: "config", Aliases: all, Getenv: getenv, Resolve: configProperty}
	res, err := loader.Load(fs, args)
	if err != nil {
		return c, err
	}
	c.sources, c.ignored = res.Source, res.Ignored
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.version {
		return c, nil
	}
	if err := c.logLevel.UnmarshalText([]byte(level)); err != nil {
		return c, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	if c.readOnlyTopics, err = engine.ParseReadOnlyTopics(readOnly); err != nil {
		return c, fmt.Errorf("--readonly-topics: %w", err)
	}
	if memoryLimit != "" {
		if c.memoryLimit, err = engine.ParseBytes(memoryLimit); err != nil {
			return c, fmt.Errorf("--memory-limit: %w", err)
		}
	}
	if stateMemory != "" {
		if c.stateMemory, err = engine.ParseStateMemory(stateMemory); err != nil {
			return c, fmt.Errorf("--state-memory: %w", err)
		}
	}
	if c.gcPercent < 1 {
		return c, fmt.Errorf("--gc-percent: %d is not a positive percentage; give 100 for Go's default", c.gcPercent)
	}
	if _, given := c.sources["gc-percent"]; !given && getenv("GOGC") != "" {
		c.gcPercent = -1 // the runtime read GOGC
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return c, fmt.Errorf("--log-format: %q is not text or json", c.logFormat)
	}
	if c.kafkaClient != "franz" && c.kafkaClient != "sarama" {
		return c, fmt.Errorf("--kafka-client: %q is not franz or sarama", c.kafkaClient)
	}
	raw := c.guarantee
	if c.guarantee, c.guaranteeDeprecated, err = engine.ParseGuarantee(raw); err != nil {
		return c, fmt.Errorf("--processing-guarantee: %q is not %s or %s", raw, engine.AtLeastOnce, engine.ExactlyOnceV2)
	}
	if c.guarantee == engine.ExactlyOnceV2 && c.kafkaClient == "sarama" {
		return c, fmt.Errorf("--processing-guarantee %s needs Kafka transactions, which the sarama client does not run: use --kafka-client franz, or --processing-guarantee %s",
			engine.ExactlyOnceV2, engine.AtLeastOnce)
	}
	for _, b := range strings.Split(bootstrap, ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.bootstrap = append(c.bootstrap, b)
		}
	}
	if c.dataDir == "" {
		return c, errors.New("--data-dir must not be empty")
	}
	if c.registryURL != "" {
		if _, err := registry.NewHTTPClient(c.registryURL, registry.ClientOptions{}); err != nil {
			return c, fmt.Errorf("--schema-registry-url: %w", err)
		}
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return c, errors.New("--tls-cert and --tls-key go together: give both to serve over TLS")
	}
	if c.tlsClientCA != "" && c.tlsCert == "" {
		return c, errors.New("--tls-client-ca needs --tls-cert and --tls-key: client certificates are checked over TLS")
	}
	if (c.user == "") != (c.password == "") {
		return c, errors.New("--auth-user and --auth-password (or SLUICE_AUTH_PASSWORD) go together")
	}
	if (c.user != "" || c.usersFile != "") && len(c.bootstrap) == 0 && !isLoopback(c.playgroundAddr) {
		return c, fmt.Errorf("--playground-addr %s is not a loopback address: the playground broker has no authentication, "+
			"so even with --auth-user or --auth-users-file anyone reaching it could read and write every topic, the server's internal ones too. "+
			"Keep it on 127.0.0.1, localhost or ::1 (the default is 127.0.0.1:9092), or give --bootstrap-servers with a secured Kafka cluster", c.playgroundAddr)
	}
	if c.kafkaSec.set() && len(c.bootstrap) == 0 {
		return c, errors.New("the Kafka TLS and SASL settings need --bootstrap-servers: the playground broker takes plain connections")
	}
	if err := c.kafkaSec.apply(&c.kafka); err != nil {
		return c, err
	}
	if err := c.connect.check(); err != nil {
		return c, err
	}
	if c.cluster && len(c.bootstrap) == 0 {
		return c, errors.New("--cluster needs --bootstrap-servers: the playground broker runs inside one server, and a cluster of servers shares a Kafka cluster")
	}
	if c.cluster && c.kafkaClient != "franz" {
		return c, errors.New("--cluster needs --kafka-client=franz: the sarama client cannot run the cluster's group membership")
	}
	if c.cluster && c.queriesFile != "" {
		return c, errors.New("--cluster and --queries-file do not go together yet: each server would run the file's statements; run them once against one server of the cluster instead")
	}
	if c.advertised != "" && !c.cluster {
		return c, errors.New("--advertised-address is where the other servers of a cluster reach this one: add --cluster")
	}
	if c.statementTimeout < 0 {
		return c, fmt.Errorf("--statement-timeout: %s is negative; give a duration such as 60s, or 0 for no limit", c.statementTimeout)
	}
	if c.httpReadTimeout <= 0 {
		return c, fmt.Errorf("--http-read-timeout: %s is not a positive duration; give one such as 30s", c.httpReadTimeout)
	}
	if c.insertsIdleTimeout <= 0 {
		return c, fmt.Errorf("--inserts-idle-timeout: %s is not a positive duration; give one such as 10m", c.insertsIdleTimeout)
	}
	if c.maxPushQueries < 0 {
		return c, fmt.Errorf("--max-push-queries (ksql.max.push.queries): %d is negative; give 0 or more (0 refuses every push query)", c.maxPushQueries)
	}
	if c.sessionTimeout < time.Second {
		return c, fmt.Errorf("--cluster-session-timeout: %s is too short; give at least 1s (the broker's group.min.session.timeout.ms bounds it too)", c.sessionTimeout)
	}
	return c, nil
}

// isLoopback reports whether the host of addr (host:port) is a loopback
// IP address or "localhost". Other host names count as not loopback, as
// does an empty host (all interfaces): what a name resolves to may change.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// run runs the server until ctx ends, then shuts it down gracefully. Once
// it serves, it prints "Sluice server listening on <addr>" and the HTTP
// address on the next line to stdout and
// calls ready (if not nil) with the bound addresses, so that tests can pass
// port 0 in --grpc, --http and --playground-addr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addrs)) (err error) {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg.version {
		fmt.Fprintf(stdout, "sluice-server %s (%s)\n", version, runtime.Version())
		return nil
	}
	log := newLogger(cfg, stderr)
	for _, k := range slices.Sorted(maps.Keys(cfg.sources)) {
		// Names and origins only: values may be secrets.
		log.Debug("setting", "name", k, "from", cfg.sources[k])
	}
	for _, k := range cfg.ignored {
		if _, perSession, _ := engine.ConfigProperty(k); perSession {
			log.Warn("config file: Sluice takes this property per session only, not from the config file: SET it in the session, or send it in the request's properties", "property", k)
			continue
		}
		log.Info("config file: property not used by Sluice", "property", k)
	}
	if cfg.guaranteeDeprecated {
		log.Warn("processing guarantee 'exactly_once' is deprecated; running exactly_once_v2")
	}
	sec, err := newSecurity(cfg, log.With("component", "auth"))
	if err != nil {
		return err
	}
	engine.TuneMemory(cfg.memoryLimit, cfg.gcPercent)
	if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}

	// The HTTP listener comes up first: /livez answers, and /readyz says
	// "starting" until the engine has replayed its catalog.
	var ready0 addrs
	probes := &health.Probes{}
	var eng atomic.Pointer[engine.Engine]
	var restAPI atomic.Pointer[rest.Handler]
	// The server-wide families of /metrics, beside the queries' figures.
	var builtinRegistry atomic.Pointer[registry.Memory]
	collectors := []metrics.Collector{
		sec.loginMetrics,
		skippedRecordMetrics(&eng, &builtinRegistry),
	}
	handler := newHTTPHandler(probes, &eng, &restAPI, cfg.queriesFile != "", collectors...)
	hs, err := startHTTP(cfg.httpAddr, sec.http(handler), &restAPI, sec.httpTLS(), cfg.httpReadTimeout, log.With("component", "http"))
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
		defer cancel()
		_ = hs.shutdown(sctx)
	}()
	ready0.HTTP = hs.addr

	brokers := cfg.bootstrap
	if len(brokers) == 0 {
		pg, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{
			Addr:    cfg.playgroundAddr,
			DataDir: filepath.Join(cfg.dataDir, "kafka"),
			Logger:  log.With("component", "playground"),
		})
		if err != nil {
			return fmt.Errorf("starting the Kafka playground on %s: %w", cfg.playgroundAddr, err)
		}
		defer pg.Close()
		ready0.Kafka = pg.Addr()
		brokers = []string{pg.Addr()}
		log.Warn("Kafka playground: this is a single-node development broker, not replicated; "+
			"do not keep data in it that you cannot lose. Outside Kafka clients (kcat, ...) can produce into it",
			"bootstrap_servers", pg.Addr(), "data_dir", filepath.Join(cfg.dataDir, "kafka"))
	}

	kcfg := kafka.Config{Brokers: brokers, ClientID: cfg.serviceID, Logger: log.With("component", "kafka"), TLS: cfg.kafka.TLS, SASL: cfg.kafka.SASL}
	var client kafka.Client
	if cfg.kafkaClient == "sarama" {
		client, err = kafka.NewSarama(kcfg)
	} else {
		client, err = kafka.NewFranz(kcfg)
	}
	if err != nil {
		return fmt.Errorf("connecting to Kafka at %s: %w", strings.Join(brokers, ","), err)
	}
	defer client.Close()

	// Listen before the engine opens: a cluster advertises the address.
	grpcLis, err := net.Listen("tcp", cfg.grpcAddr)
	if err != nil {
		return fmt.Errorf("listening for gRPC on %s: %w", cfg.grpcAddr, err)
	}
	defer grpcLis.Close()
	reg, regAddr, stopRegistry, err := startRegistry(ctx, cfg, client, sec, log.With("component", "schema-registry"))
	if err != nil {
		return err
	}
	defer stopRegistry()
	var ownTopics []string
	if m, ok := reg.(*registry.Memory); ok {
		builtinRegistry.Store(m)
		ownTopics = append(ownTopics, registry.DefaultTopic)
	}
	ready0.Registry = regAddr
	connectClient, connectTopics, err := cfg.connect.client(log.With("component", "connect"))
	if err != nil {
		return err
	}
	ecfg := engine.Config{
		Kafka:     client,
		DataDir:   filepath.Join(cfg.dataDir, "state"),
		ServiceID: cfg.serviceID,
		Logger:    log.With("component", "engine"),
		Registry:  reg,

		ProcessingGuarantee: cfg.guarantee,
		MaxRecordBytes:      cfg.maxRecordBytes,
		StateMemory:         cfg.stateMemoryBudget(),
		ReadOnlyTopics:      cfg.readOnlyTopics,
		OwnTopics:           ownTopics,
		StatementTimeout:    engineTimeout(cfg.statementTimeout),
		MaxPushQueries:      engineLimit(cfg.maxPushQueries),
		PushV2Enabled:       cfg.pushV2,
		Connect:             connectClient,
		ConnectTopics:       connectTopics,
	}
	if cfg.cluster {
		cc, fwd, err := clusterConfig(cfg, grpcLis.Addr().String(), sec)
		if err != nil {
			return err
		}
		defer fwd.Close()
		ecfg.Cluster = cc
	}
	e, err := engine.Open(ctx, ecfg)
	if err != nil {
		return fmt.Errorf("opening the engine: %w", err)
	}
	defer func() {
		// Last: the engine stops its queries after each one's current
		// batch, which it produces and commits.
		if cerr := e.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing the engine: %w", cerr)
		}
		log.Info("stopped")
	}()
	eng.Store(e)
	clusterID, err := client.ClusterID(ctx)
	if err != nil {
		log.Warn("cannot read the Kafka cluster's id; /info leaves kafkaClusterId empty", "err", err)
	}
	restAPI.Store(newREST(e, client, clusterID, cfg, log.With("component", "rest")))

	if cfg.queriesFile != "" {
		n, err := headless.Run(ctx, e, cfg.queriesFile, cfg.dataDir)
		if err != nil {
			return err
		}
		log.Info("headless mode: interactive statements are refused", "queries_file", cfg.queriesFile, "statements_run", n)
	}

	grpcOpts := sec.grpc()
	if cfg.queriesFile != "" {
		grpcOpts = append(grpcOpts, headless.ServerOptions()...)
	}
	srv := server.New(e, server.Options{
		Version:               version,
		ServiceID:             cfg.serviceID,
		KafkaBootstrapServers: strings.Join(brokers, ","),
		Playground:            len(cfg.bootstrap) == 0,
		SchemaRegistryURL:     registryURL(cfg, ready0.Registry),
		Logger:                log.With("component", "server"),
		GRPCOptions:           grpcOpts,
	})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(grpcLis) }()

	ready0.GRPC, ready0.Services = grpcLis.Addr().String(), srv.ServiceInfo()
	probes.SetReady(e.Ready)
	fmt.Fprintf(stdout, "Sluice server listening on %s\n", ready0.GRPC)
	fmt.Fprintf(stdout, "HTTP (REST API, /livez, /readyz, /metrics) on %s\n", ready0.HTTP)
	if ready0.Registry != "" {
		fmt.Fprintf(stdout, "Schema registry (Confluent's REST API) on %s\n", registryURL(cfg, ready0.Registry))
	}
	log.Info("serving", "grpc", ready0.GRPC, "http", ready0.HTTP, "tls", sec.tls != nil, "mtls", cfg.tlsClientCA != "",
		"basic_auth", sec.users != nil, "kafka", strings.Join(brokers, ","), "kafka_client", cfg.kafkaClient,
		"kafka_tls", cfg.kafka.TLS != nil, "kafka_sasl", saslMechanism(cfg.kafka.SASL),
		"schema_registry", registryURL(cfg, ready0.Registry), "connect", connectURL(connectClient), "service_id", cfg.serviceID, "data_dir", cfg.dataDir, "headless", cfg.queriesFile != "", "version", version)
	if ready != nil {
		ready(ready0)
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down: draining calls, then committing and closing queries")
	case err := <-served:
		srv.Stop()
		if err == nil {
			err = errors.New("stopped unexpectedly")
		}
		return fmt.Errorf("serving gRPC: %w", err)
	case err := <-hs.served:
		hs.served <- err
		srv.Stop()
		if err == nil {
			err = errors.New("stopped unexpectedly")
		}
		return fmt.Errorf("serving HTTP: %w", err)
	}
	probes.SetStopping()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	if err := hs.shutdown(sctx); err != nil {
		log.Warn("REST requests still in progress at the shutdown timeout were cut off", "err", err)
	}
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("calls still in progress at the shutdown timeout were cut off", "timeout", cfg.shutdownTimeout)
	}
	if err := <-served; err != nil {
		log.Warn("gRPC server", "err", err)
	}
	return nil
}

// engineTimeout is --statement-timeout as engine.Config takes it: the
// flag's 0 (no limit) is the engine's negative.
func engineTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// engineLimit is --max-push-queries as engine.Config takes it: the flag's
// 0 (ksqlDB's: no push query) is the engine's negative.
func engineLimit(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// saslMechanism names the SASL mechanism in use, "" for none.
func saslMechanism(s *kafka.SASL) string {
	if s == nil {
		return ""
	}
	return s.Mechanism
}

// newLogger returns the server's logger per --log-format and --log-level.
func newLogger(cfg config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	if cfg.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// stateMemoryBudget is the state memory budget the engine runs with:
// --state-memory, else a quarter of --memory-limit, else the default.
func (c config) stateMemoryBudget() int64 {
	if c.stateMemory > 0 {
		return c.stateMemory
	}
	return engine.StateMemoryFor(c.memoryLimit)
}
