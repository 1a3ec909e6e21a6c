"""Drives Sluice's REST API with the PyPI package ksqldb (1.0.1), as its
users do: statements over /ksql, rows over /inserts-stream and queries over
/query-stream (HTTP/2), a push query closed with /close-query, the session
properties it reads, a CREATE TABLE AS SELECT reading from the earliest
offset with ksqlDB's ksql.streams. spelling, and a DROP TABLE that ends its
query. Usage: python ksqldb_client.py http://127.0.0.1:8088"""

import asyncio
import sys

from ksqldb import KSQLdbClient

STREAM = "KQ_ORDERS"


def check(cond, what, got):
    if not cond:
        print(f"FAIL {what}: {got!r}")
        sys.exit(1)
    print(f"ok {what}")


async def until_totals(client, sql, want, props):
    """Reads a push query's rows until the latest total of each key is in
    want; returns the latest totals."""
    latest = {}
    async for item in client.query_async(sql, stream_properties=props, timeout=60):
        if isinstance(item, list):
            latest[item[0]] = item[1]
            if latest == want:
                break
    return latest


async def first_rows(client, sql, n, props):
    """Reads a push query's header and n rows, then closes it."""
    out = []
    async for item in client.query_async(sql, stream_properties=props, timeout=60):
        out.append(item)
        if len(out) == n + 1:
            break
    return out


def main(url):
    client = KSQLdbClient(url)
    res = client.ksql(
        f"CREATE STREAM {STREAM} (id VARCHAR KEY, item VARCHAR, amount DOUBLE) "
        "WITH (KAFKA_TOPIC='kq_orders', VALUE_FORMAT='JSON', PARTITIONS=1);"
    )
    check(res[0]["@type"] == "currentStatus" and res[0]["commandStatus"]["status"] == "SUCCESS", "create stream", res)

    acks = client.inserts_stream(STREAM, [
        {"ID": "k1", "ITEM": "apple", "AMOUNT": 5.5},
        {"ID": "k2", "ITEM": "pear", "AMOUNT": 25},
        {"ID": "k1", "ITEM": "fig", "AMOUNT": 40},
    ])
    check([a["status"] for a in acks] == ["ok", "ok", "ok"], "inserts stream", acks)

    pull = client.query_sync(f"SELECT id, amount FROM {STREAM} WHERE amount > 10;")
    check(pull[0].get("queryId") and pull[0]["columnNames"] == ["ID", "AMOUNT"], "pull query header has a query id", pull[0])
    check(pull[1:] == [["k2", 25.0], ["k1", 40.0]], "pull query rows", pull)

    earliest = {"ksql.streams.auto.offset.reset": "earliest"}
    rows = asyncio.run(first_rows(client, f"SELECT id, item FROM {STREAM} EMIT CHANGES;", 2, earliest))
    check(rows[0].get("queryId") and rows[1:] == [["k1", "apple"], ["k2", "pear"]], "push query", rows)

    props = client.get_properties()
    check(any(p["name"] == "ksql.service.id" for p in props), "show properties", props)

    res = client.ksql(f"CREATE TABLE KQ_TOTALS AS SELECT id, SUM(amount) AS total FROM {STREAM} GROUP BY id;",
                      stream_properties=earliest)
    check(res[0]["commandStatus"]["queryId"], "create table as select", res)
    want = {"k1": 45.5, "k2": 25.0}
    totals = asyncio.run(until_totals(client, "SELECT id, total FROM KQ_TOTALS EMIT CHANGES;", want, earliest))
    check(totals == want, "table read from the earliest offset", totals)

    res = client.ksql("DROP TABLE KQ_TOTALS;")
    check(res[0]["commandStatus"]["status"] == "SUCCESS", "drop table ends its query", res)
    queries = client.ksql("SHOW QUERIES;")[0]["queries"]
    check(not any(q["id"].startswith("CTAS_KQ_TOTALS") for q in queries), "no query left", queries)

    print("PASS")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8088")
