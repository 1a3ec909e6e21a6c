"""Outside-client check of the playground's built-in schema registry.

Usage: registry_interop.py REGISTRY_URL BOOTSTRAP_SERVERS TOPIC N

With confluent_kafka's SchemaRegistryClient it registers an Avro schema and
reads it back; with its AvroSerializer it produces N records to TOPIC on the
playground broker (registering the value subject as it goes), reads them
back with AvroDeserializer, and prints one JSON document of what it saw.
"""

import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

SCHEMA = json.dumps({
    "type": "record",
    "name": "Reading",
    "namespace": "io.sluice.interop",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "reading", "type": "double"},
        {"name": "seq", "type": "long"},
    ],
})

# Adds a defaulted field: BACKWARD compatible.
SCHEMA_V2 = json.dumps({
    "type": "record",
    "name": "Reading",
    "namespace": "io.sluice.interop",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "reading", "type": "double"},
        {"name": "seq", "type": "long"},
        {"name": "unit", "type": "string", "default": "C"},
    ],
})

# Adds a field with no default: not BACKWARD compatible.
SCHEMA_BAD = json.dumps({
    "type": "record",
    "name": "Reading",
    "namespace": "io.sluice.interop",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "site", "type": "string"},
    ],
})


def main():
    url, bootstrap, topic, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    out = {}
    sr = SchemaRegistryClient({"url": url})
    subject = topic + "-value"

    # The serializer registers the value schema on first use.
    ser = AvroSerializer(sr, SCHEMA)
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(n):
        rec = {"sensor": "s%d" % (i % 3), "reading": i * 1.5, "seq": i}
        ctx = SerializationContext(topic, MessageField.VALUE)
        p.produce(topic, key=("k%d" % i).encode(), value=ser(rec, ctx))
    if p.flush(30) != 0:
        raise SystemExit("records not delivered")

    latest = sr.get_latest_version(subject)
    out["subject"] = latest.subject
    out["version"] = latest.version
    out["id"] = latest.schema_id
    out["schema_type"] = latest.schema.schema_type
    out["subjects"] = sr.get_subjects()
    out["by_id"] = json.loads(sr.get_schema(latest.schema_id).schema_str)["name"]
    out["compatible_v2"] = sr.test_compatibility(subject, Schema(SCHEMA_V2, "AVRO"))
    out["compatible_bad"] = sr.test_compatibility(subject, Schema(SCHEMA_BAD, "AVRO"))
    try:
        sr.register_schema(subject, Schema(SCHEMA_BAD, "AVRO"))
        out["register_bad"] = "accepted"
    except Exception as e:  # SchemaRegistryError
        out["register_bad"] = getattr(e, "error_code", str(e))
    out["id_v2"] = sr.register_schema(subject, Schema(SCHEMA_V2, "AVRO"))
    out["versions"] = sr.get_versions(subject)
    out["config"] = sr.get_compatibility()

    de = AvroDeserializer(sr)
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "registry-interop",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    c.subscribe([topic])
    records = []
    polls = 0
    while len(records) < n and polls < 120:
        polls += 1
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        v = m.value()
        records.append({
            "key": m.key().decode(),
            "magic": v[0],
            "schema_id": int.from_bytes(v[1:5], "big"),
            "value": de(v, SerializationContext(topic, MessageField.VALUE)),
        })
    c.close()
    out["records"] = records
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
