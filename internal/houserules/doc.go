// Package houserules holds tests of the repository's own rules: which
// packages may import the SQL parser library and the Kafka client
// libraries, which may not depend on the parser at all, even through
// another package, and that tests never sleep to wait.
package houserules
