// Package wire converts SQL values between the engine's Go representation
// (documented in package types) and their gRPC form, sluicev1.Value.
//
//	engine value + type ──EncodeValue──▶ sluicev1.Value ──DecodeValue──▶ value + type
//
// The server encodes push query rows with EncodeRow; clients decode them
// with DecodeValue and render them with types.FormatValue, so that a value
// reads the same whether the engine or a client prints it.
//
// The wire form keeps what formatting needs and drops the rest: INTEGER
// and BIGINT both travel as int_value and come back as BIGINT (int64), a
// DECIMAL comes back with the precision its digits need, struct field
// names travel with each value, and strings are made valid UTF-8.
package wire
