"""Outside-client check of the built-in schema registry under basic authentication.

Usage: registry_auth.py REGISTRY_URL USER PASSWORD

With confluent_kafka's SchemaRegistryClient and AvroSerializer it tries the
registry without credentials, with a wrong password and with USER:PASSWORD
given as basic.auth.user.info, and prints one JSON document of what each
got: the HTTP status and Schema Registry error code of a refusal, the
schema id and subjects of a success.
"""

import json
import sys

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

SCHEMA = json.dumps({
    "type": "record",
    "name": "Login",
    "namespace": "io.sluice.interop",
    "fields": [{"name": "user", "type": "string"}],
})


def refusal(fn):
    """Runs fn and returns how the registry refused it, or "accepted"."""
    try:
        fn()
        return "accepted"
    except Exception as e:  # SchemaRegistryError
        return {
            "status": getattr(e, "http_status_code", None),
            "error_code": getattr(e, "error_code", None),
            "message": getattr(e, "error_message", str(e)),
        }


def client(url, user_info=None):
    conf = {"url": url, "max.retries": 0}
    if user_info is not None:
        conf["basic.auth.user.info"] = user_info
    return SchemaRegistryClient(conf)


def main():
    url, user, password = sys.argv[1], sys.argv[2], sys.argv[3]
    subject = "logins-value"
    ctx = SerializationContext("logins", MessageField.VALUE)
    out = {}
    for name, sr in (("anonymous", client(url)), ("wrong_password", client(url, user + ":" + password + "-wrong"))):
        out[name] = {
            "register": refusal(lambda: sr.register_schema(subject, Schema(SCHEMA, "AVRO"))),
            "subjects": refusal(sr.get_subjects),
            "serialize": refusal(lambda: AvroSerializer(sr, SCHEMA)({"user": "x"}, ctx)),
        }

    sr = client(url, user + ":" + password)
    value = AvroSerializer(sr, SCHEMA)({"user": "alice"}, ctx)
    latest = sr.get_latest_version(subject)
    out["right"] = {
        "magic": value[0],
        "schema_id": int.from_bytes(value[1:5], "big"),
        "id": latest.schema_id,
        "version": latest.version,
        "subjects": sr.get_subjects(),
    }
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
