#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Validate containerlab topology files against containerlab's own schema.

usage: clab_schema.py SCHEMA FILE...

The schema (JSON Schema draft-07, from the containerlab repository) is
read as it is, with two known faults worked round: its \\p{N}\\p{L}
classes, which Python's re lacks, read as [0-9A-Za-z]; and the veth
link's "additionalItems" where "additionalProperties" was meant, so a
stray key on a veth link is looked for here. Exit 0 when every file is
valid; else 1, each fault said on stderr as FILE: PATH: MESSAGE.
"""
import json
import re
import sys

import jsonschema
import yaml

VETH_KEYS = {"type", "endpoints", "mtu", "ipv4", "ipv6", "vars", "labels"}


def load_schema(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # in the JSON text a backslash is doubled: \\p{N} is \p{N}
    text = re.sub(r"\\\\p\{[NL]\}", "0-9A-Za-z", text)
    return json.loads(text)


def faults(schema, path):
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    v = jsonschema.Draft7Validator(schema)
    for e in sorted(v.iter_errors(doc), key=lambda e: list(e.path)):
        yield "/".join(str(p) for p in e.path), e.message
    links = ((doc or {}).get("topology") or {}).get("links") or []
    for i, link in enumerate(links):
        if isinstance(link, dict) and link.get("type") == "veth":
            for k in sorted(set(link) - VETH_KEYS):
                yield f"topology/links/{i}", f"stray key '{k}' on a veth link"


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    schema = load_schema(argv[1])
    bad = 0
    for path in argv[2:]:
        for where, msg in faults(schema, path):
            print(f"{path}: {where}: {msg}", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
