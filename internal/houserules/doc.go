// Package houserules holds tests of the repository's own rules: which
// packages may import the SQL parser library and the Kafka client
// libraries; that what runs a plan (exec, state, format, the topology)
// does not depend on the parser, even through another package; that the
// engine answers with typed values and the REST facade only renders them;
// that the engine takes what a query owns (topics, state, the topics its
// stages read) from the plan's physical part, not from exec's derivations
// of the steps; that every package has a doc.go; and that tests never sleep to wait.
package houserules
