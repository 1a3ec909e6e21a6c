// Package registry is Sluice's schema registry for the AVRO, PROTOBUF and
// JSON_SR formats: the Client the engine uses to register and look up
// schemas, an in-process store (Memory), Confluent's REST API over it for
// the playground, and an HTTP client for a registry elsewhere.
package registry
