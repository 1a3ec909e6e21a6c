// Command sluice-server runs a Sluice server: the engine, with its
// persistent queries, behind the gRPC API of package server.
//
//	sluice-server [--grpc 127.0.0.1:8089] [--data-dir ./sluice-data]
//	              [--bootstrap-servers host:9092,...] [--kafka-client franz|sarama]
//
// Without --bootstrap-servers it runs in playground mode: it starts a
// single-node, unreplicated development Kafka broker in-process, on
// --playground-addr, keeping its topics under <data-dir>/kafka, so that any
// Kafka client can produce into it and a restart keeps every topic. The
// engine keeps its local state under <data-dir>/state.
//
// SIGINT or SIGTERM stops it gracefully: the gRPC server stops accepting
// calls and ends running push queries, then the engine closes (committing
// what its queries processed), then the Kafka client and the playground.
package main
