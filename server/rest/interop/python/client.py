"""Drives Sluice's REST API with the ksql-python-ng package: creates a
stream, inserts rows, runs a push query over HTTP/2 until it has the rows
and closes it, a push query with a LIMIT over HTTP/1.1 (/query), and a
pull query. Usage: python client.py http://127.0.0.1:8088"""

import json
import sys

from ksql import KSQLAPI
from ksql.errors import KSQLError

STREAM = "PY_ORDERS"


def check(cond, what, got):
    if not cond:
        print(f"FAIL {what}: {got!r}")
        sys.exit(1)
    print(f"ok {what}")


def lines(chunks):
    """Splits streamed chunks into JSON lines."""
    buf = ""
    for chunk in chunks:
        buf += chunk
        while "\n" in buf:
            line, buf = buf.split("\n", 1)
            if line.strip():
                yield line
    if buf.strip():
        yield buf


def main(url):
    api = KSQLAPI(url)  # asks /info for the version
    check(api.get_ksql_version() is not None, "info", None)

    res = api.ksql(
        f"CREATE STREAM {STREAM} (id VARCHAR KEY, item VARCHAR, amount DOUBLE) "
        "WITH (KAFKA_TOPIC='py_orders', VALUE_FORMAT='JSON', PARTITIONS=1);"
    )
    check(res[0]["@type"] == "currentStatus", "create stream", res)

    streams = api.ksql("SHOW STREAMS;")
    check(any(s["name"] == STREAM for s in streams[0]["streams"]), "show streams", streams)

    acks = api.inserts_stream(STREAM, [
        {"ID": "p1", "ITEM": "apple", "AMOUNT": 5.5},
        {"ID": "p2", "ITEM": "pear", "AMOUNT": 25},
    ])
    check([a["status"] for a in acks] == ["ok", "ok"], "inserts stream", acks)

    props = {"auto.offset.reset": "earliest"}
    results = lines(api.query(f"SELECT id, item FROM {STREAM} EMIT CHANGES;",
                              use_http2=True, stream_properties=props))
    header = json.loads(next(results))
    check(header.get("queryId") and header["columnNames"] == ["ID", "ITEM"], "push query header", header)
    rows = [json.loads(next(results)) for _ in range(2)]
    check(rows == [["p1", "apple"], ["p2", "pear"]], "push query rows", rows)
    check(api.close_query(header["queryId"]) is True, "close query", header["queryId"])
    rest = list(results)
    check(rest == [], "push query ends when closed", rest)

    old = "".join(api.query(f"SELECT id FROM {STREAM} EMIT CHANGES LIMIT 2;",
                            use_http2=False, stream_properties=props))
    parsed = json.loads(old)
    check(parsed[1]["row"]["columns"] == ["p1"] and parsed[-1]["finalMessage"] == "Limit Reached",
          "push query over /query", parsed)

    pull = list(api.query(f"SELECT id, amount FROM {STREAM} WHERE amount > 10;",
                          use_http2=True, parse=True))
    check(pull == [{"ID": "p2", "AMOUNT": 25.0}], "pull query", pull)

    try:
        api.ksql("DESCRIBE nope;")
        check(False, "error", "no error")
    except KSQLError as e:
        check(e.error_code == 40001, "statement error", e)

    print("PASS")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8088")
