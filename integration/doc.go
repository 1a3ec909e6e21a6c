// Package integration holds Sluice's tests against a real Apache Kafka:
// both client adapters, the engine end to end with an at-least-once
// oracle, broker faults, and outside clients (kcat, Python
// confluent_kafka). The package has tests only; the kill -9 harness
// (`make crash`) is the command in integration/crash, and the seeded
// driver and oracle both use are in internal/oracle.
//
// The tests read the bootstrap address from SLUICE_TEST_KAFKA and skip
// without it (they fail under CI=true). `make test-kafka` starts a broker
// with scripts/kafka.sh, runs them, and then runs the cluster tests on a
// 3-node cluster with SLUICE_TEST_KAFKA_NODES=3. Topic names carry a
// random suffix per run, so a shared broker can run them again.
//
//	SLUICE_TEST_KAFKA        bootstrap "host:port[,host:port...]"
//	SLUICE_TEST_KAFKA_NODES  nodes of the cluster scripts/kafka.sh started
//	                         (1 default; 3 runs the cluster fault tests)
//	SLUICE_TEST_SEED         seed of the record driver (default: random,
//	                         printed)
//	SLUICE_TEST_RECORDS      records a driver run produces (default 4000)
//	SLUICE_TEST_KAFKA_LOG    when set, the engine's and clients' warnings
//	                         go to the test log
package integration
