// Package rqtt runs ksqlDB's REST query-validation tests (the RQTT corpus,
// see ../shared/rqtt/README.md) through Sluice's REST API and judges the
// responses the way ksqlDB's own runner does.
//
//	corpus file ──Load──▶ cases ──Expand──▶ runs ({FORMAT}; a PROTOBUF_RESPONSE
//	                                              │  run per testPullWithProtoFormat case)
//	            SkipReason (enabled: false, versions.max) ◀┤
//	                                              ▼
//	  qtt.World per run (fresh broker, topics, schema registry, engine)
//	  + the REST handler over httptest:
//	  POST /ksql (every statement before the first SELECT, one request)
//	     ─▶ inputs (or once the push query's header came) ─▶ engine Flush
//	     ─▶ POST /query per SELECT, the streamed array read to its end,
//	        its LIMIT or the expected number of entries
//	     ─▶ outputs (qtt's CompareRecords) ─▶ CompareResponses
//	                                              │
//	                                  Result ─▶ Report (per file, totals)
//
// CompareResponses is the judge: each expected response is matched on the
// actual one at its place; a query's entries must be exactly as many as
// expected, each matched as a partial map (only the fields the expected
// entry names, "name|starts_with" comparing a prefix), rows as a multiset
// unless verifyOrder, numbers by kind (1 and 1.0 differ) and value.
// MatchError judges an expectedError: the error entity's type, the HTTP
// status, and the message.
//
// The corpus is third-party data and is read where it lies; it is never
// copied into this repository. What is shared with the QTT runner (loading
// files with comments, format expansion, topics, record codecs, output
// comparison) comes from internal/qtt.
package rqtt
