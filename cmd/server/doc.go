// Command sluice-server runs a Sluice server: the engine, with its
// persistent queries, behind the gRPC API of package server and an HTTP
// listener (the REST API, /livez, /readyz and the Prometheus /metrics).
//
//	sluice-server [--grpc 127.0.0.1:8089] [--http 127.0.0.1:8088]
//	              [--data-dir ./sluice-data] [--config sluice.properties]
//	              [--bootstrap-servers host:9092,...] [--kafka-client franz|sarama]
//	              [--schema-registry-url URL | --schema-registry-addr 127.0.0.1:8081]
//	              [--queries-file F] [--log-format text|json] [--log-level info]
//	              [--tls-cert F --tls-key F [--tls-client-ca F]]
//	              [--auth-users-file F | --auth-user U (SLUICE_AUTH_PASSWORD)]
//	              [--readonly-topics REGEX,...] [--version]
//
// Every setting is a flag, an environment variable SLUICE_<FLAG> (dashes
// as underscores: SLUICE_DATA_DIR) and a key of the --config properties
// file (key=value lines as in ksqlDB's ksql-server.properties, whose names
// bootstrap.servers, ksql.service.id, listeners and ksql.queries.file are
// understood). Flags win over the environment, which wins over the file.
//
// An outside Kafka cluster may need TLS (--kafka-tls, --kafka-tls-ca,
// --kafka-tls-cert/--kafka-tls-key) and SASL (--kafka-sasl-mechanism
// PLAIN|SCRAM-SHA-256|SCRAM-SHA-512, --kafka-sasl-username,
// SLUICE_KAFKA_SASL_PASSWORD); a config file may give Kafka's own
// security.protocol, sasl.mechanism, sasl.jaas.config and (a PEM bundle)
// ssl.truststore.location instead. Passwords never show in logs or errors.
//
// Without --bootstrap-servers it runs in playground mode: it starts a
// single-node, unreplicated development Kafka broker in-process, on
// --playground-addr, keeping its topics under <data-dir>/kafka, so that any
// Kafka client can produce into it and a restart keeps every topic. The
// engine keeps its local state under <data-dir>/state. Unless
// --schema-registry-url names a registry, the playground also serves a
// built-in schema registry (Confluent's REST API, package registry) on
// --schema-registry-addr, kept in the playground's _schemas topic; with
// --bootstrap-servers and no --schema-registry-url (or
// ksql.schema.registry.url) there is no registry.
//
// With --queries-file it runs headless, as ksqlDB does: it runs the file's
// statements once per data directory at start and then refuses interactive
// statements ("The server is running in headless mode. Interactive use is
// disabled."); only Info, health, reflection, the probes and /metrics
// answer.
//
// With --tls-cert and --tls-key both listeners serve TLS; --tls-client-ca
// requires client certificates (mutual TLS). With --auth-users-file (lines
// "user: password[,role ...]", the password plain or MD5:/SHA256: hex
// digests) or --auth-user, every HTTP route and gRPC method requires basic
// authentication (gRPC: the "authorization" metadata) but /livez and
// /readyz; so does the built-in schema registry, and --playground-addr
// must then be a loopback address (the playground broker has no
// authentication). Refused logins are counted in /metrics and logged,
// a line a second per surface at most.
//
// The server's own topics (_sluice-*, the registry's _schemas) and those
// of --readonly-topics (ksqlDB's ksql.readonly.topics) take no statement
// that registers a source over them, writes, PRINTs or deletes them; the
// processing log is read, never written. A record of the command log or
// of the registry's journal that cannot be read, or that is refused, is
// skipped at start with an error naming its topic and offset and counted
// in /metrics; the rest is applied.
//
// /readyz answers 200 once the catalog is replayed, the queries started
// and Kafka answers, and 503 from the start of a shutdown. SIGINT or
// SIGTERM stops it gracefully: the gRPC server stops accepting calls and
// ends running push queries, then the engine closes (each query finishes,
// produces and commits its current batch), then the Kafka client and the
// playground.
package main
