// Package registry is Sluice's schema registry for the AVRO, PROTOBUF and
// JSON_SR formats: the Client interface the engine uses to register and
// look up schemas; Memory, a registry in process with Confluent's
// semantics (versions, soft and permanent deletes, ids never reused,
// compatibility levels checked by Avro schema resolution or a field-level
// rule for JSON and Protobuf schemas), kept across restarts by a Journal (a
// compacted _schemas topic, or a file); Server, Confluent Schema
// Registry's REST API over a Memory, which the playground serves; and
// HTTPClient, a Client of any registry speaking that API (Confluent's,
// Apicurio's ccompat API, the playground's).
package registry
