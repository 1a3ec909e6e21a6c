// Package format encodes and decodes Kafka record keys and values in the
// serialization formats of ksqlDB (KEY_FORMAT, VALUE_FORMAT, FORMAT).
//
//	bytes ──Codec.Decode──▶ []any (one SQL value per column, see package types)
//	[]any ──Codec.Encode──▶ bytes (appended to a caller's buffer)
//
// The formats: JSON and DELIMITED (keys and values), KAFKA (a single
// column of INTEGER, BIGINT, DOUBLE, STRING or BYTES), NONE (no columns),
// PROTOBUF_NOSR (protobuf.go), and the schema-registry formats AVRO
// (avro*.go), PROTOBUF (confluent_protobuf.go) and JSON_SR (jsonsr.go),
// which frame each record with Confluent's magic byte and schema id
// (confluent.go) and resolve the writer's schema through a registry.
// Kafka Connect's JSON envelope ({"schema": …, "payload": …}) is read and
// written by connect_json.go.
//
// JSON decoding follows ksqlDB's JSON deserializer: object field names match
// column names exactly first, then case-insensitively; missing fields are
// null; a value is coerced to its column's type where ksqlDB coerces it:
//
//	BOOLEAN    true/false, or the strings "true"/"false" (any case)
//	INTEGER    a number (a fraction is truncated) or a numeric string
//	BIGINT     as INTEGER
//	DOUBLE     a number or a numeric string
//	DECIMAL    a number or a numeric string, rounded half up to the column's
//	           scale; an error when it exceeds the precision
//	STRING     a string; a number or boolean as its JSON text; an object or
//	           array as its compact JSON text
//	BYTES      a base64 string
//	TIMESTAMP  milliseconds since the epoch (number or numeric string)
//	DATE       days since the epoch; TIME milliseconds since midnight
//	ARRAY, MAP, STRUCT  nested arrays and objects, element by element
//
// Anything else is a decode error, as is malformed JSON; the caller sends
// such records to the processing log. A value schema with a single column
// and WRAP_SINGLE_VALUE=false reads and writes that column's value bare,
// and so does a JSON key with a single column, as ksqlDB does.
//
// DELIMITED is one CSV record as ksqlDB writes it with Apache Commons CSV:
// fields separated by VALUE_DELIMITER or KEY_DELIMITER (one character, or
// TAB or SPACE; a comma by default), a field quoted with '"' when it holds
// the delimiter, a quote or a line break, starts with a character up to
// '#', ends with a space, or is the first field and does not start with a
// letter or digit; quotes inside are doubled. Null is an empty field, and
// an empty field (quoted or not) reads as null. Numbers are written as
// ksqlDB prints them (DOUBLE as Java's Double.toString, DECIMAL in plain
// notation with its scale), BOOLEAN as true/false (reading anything but
// "true" in any case as false), BYTES in base64, and TIMESTAMP, DATE and
// TIME as milliseconds, days and milliseconds. A DECIMAL field must fit
// its column without rounding. ARRAY, MAP and STRUCT columns are refused.
// A record with the wrong number of fields is a decode error, as in
// ksqlDB: "Unexpected field count, csvFields:2 schemaFields:3".
package format
