"""What a scale per `||` alternative costs normalization, in-process CPU time (no database, no server).

.venv/bin/python bench/scale_per_alternative.py
"""

import time

import _setup  # noqa: F401

from demo.data import DEMO_MAPPING_DOCUMENT, DEMO_RECORDS
from mappings.documents import parse_mapping_document
from mappings.normalization import normalize

CALLS = 20_000
SOURCE = "properties.system_size_w || properties.system_size_kw"


def microseconds_per_record(rules, data) -> float:
    """Best of three runs of CALLS normalizations, CPU time of this process."""
    normalize(data, rules)
    runs = []
    for _ in range(3):
        start = time.process_time()
        for _ in range(CALLS):
            normalize(data, rules)
        runs.append((time.process_time() - start) / CALLS * 1e6)
    return min(runs)


def size_rules(scale):
    return parse_mapping_document({"fields": {"systemSizeKw": {"source": SOURCE, "type": "decimal", "scale": scale}}})


in_watts = DEMO_RECORDS[0]["data"]
in_kilowatts = {"properties": {"system_size_w": None, "system_size_kw": 8.8}}
cases = [
    ("demo document (13 rules)", parse_mapping_document(DEMO_MAPPING_DOCUMENT), in_watts),
    ("a || b, one scale, a set", size_rules(0.001), in_watts),
    ("a || b, a scale each, a set", size_rules([0.001, 1]), in_watts),
    ("a || b, one scale, b set", size_rules(0.001), in_kilowatts),
    ("a || b, a scale each, b set", size_rules([0.001, 1]), in_kilowatts),
]
for label, rules, data in cases:
    print(f"{label}: {microseconds_per_record(rules, data):.1f} µs a record")
