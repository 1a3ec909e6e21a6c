// Drives Sluice's REST API with the ksqldb-client package: creates a
// stream, inserts rows, runs a push query until it has the rows and closes
// it, then runs a pull query. Usage: node client.js http://127.0.0.1:8088
"use strict";
const KsqldbClient = require("ksqldb-client");

const url = new URL(process.argv[2] || "http://127.0.0.1:8088");
const stream = "NODE_ORDERS";

function check(cond, what, got) {
  if (!cond) {
    console.error("FAIL " + what + ": " + JSON.stringify(got));
    process.exit(1);
  }
  console.log("ok " + what);
}

async function main() {
  const client = new KsqldbClient({ host: url.protocol + "//" + url.hostname, port: Number(url.port) });
  await client.connect();

  const created = await client.executeStatement(
    "CREATE STREAM " + stream + " (id VARCHAR KEY, item VARCHAR, amount DOUBLE) " +
      "WITH (KAFKA_TOPIC='node_orders', VALUE_FORMAT='JSON', PARTITIONS=1);"
  );
  check(created.status === 200 && created.data.rows[0]["@type"] === "currentStatus", "create stream", created);

  const streams = await client.listStreams();
  check(streams.some((s) => s.name === stream), "list streams", streams);

  for (const row of [
    { ID: "n1", ITEM: "apple", AMOUNT: 5.5 },
    { ID: "n2", ITEM: "pear", AMOUNT: 25 },
  ]) {
    const ins = await client.insertInto(stream, row);
    check(ins.status === 200 && ins.data.rows[0].status === "ok", "insert " + row.ID, ins);
  }

  const desc = await client.describeSource(stream);
  check(desc && desc.name === stream && desc.fields.length === 3, "describe source", desc);

  const rows = [];
  let closing;
  const push = await client.streamQuery(
    "SELECT id, item, amount FROM " + stream + " EMIT CHANGES;",
    (data) => {
      if (data.status !== 200 || !data.rows) return;
      rows.push(...data.rows);
      if (rows.length === 2 && !closing) {
        closing = client.terminatePushQuery(data.metadata.queryId);
      }
    },
    { properties: { "auto.offset.reset": "earliest" } }
  );
  check(push.status === 200 && push.data.metadata.queryId, "push query header", push);
  check(rows.length === 2 && rows[0].ID === "n1" && rows[1].AMOUNT === 25, "push query rows", rows);
  const closed = await closing;
  check(closed.status === 200, "close push query", closed);

  const pull = await client.query("SELECT id, amount FROM " + stream + " WHERE amount > 10;");
  check(pull.status === 200 && pull.data.rows.length === 1 && pull.data.rows[0].ID === "n2", "pull query", pull);

  const bad = await client.query("SELECT nope FROM " + stream + ";");
  check(bad.status === 400 && bad.error.error_code === 40001, "query error", bad);

  await client.disconnect();
  console.log("PASS");
}

main().catch((err) => {
  console.error("FAIL", err);
  process.exit(1);
});
