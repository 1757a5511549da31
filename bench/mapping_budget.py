"""A push's normalization under the worst source expression the save bounds accept, on every mapped field, beside
plain key paths: what the evaluation budget of mappings/evaluation.py holds it to (CONTRACT §17, issue #25).

    flock /tmp/bench.lock .venv/bin/python bench/mapping_budget.py

In-process, no database: `normalize` as a push calls it, on pushes of about 1 KB to 1 MB. The unbounded column is
JMESPath's own interpreter on the worst expression for one field (what one field cost before the budget).
"""

import json
import time

import _setup  # noqa: F401  (Django's settings)
import jmespath

from mappings.documents import parse_mapping_document
from mappings.normalization import normalize
from projects.canonical import CANONICAL_FIELDS

TYPE_OF_KIND = {"text": "string", "integer": "decimal", "decimal": "decimal", "date": "date"}
COPIES = "[" + ",".join(["@"] * 45) + "]"
WORST = f"{COPIES}[] | {COPIES} | to_string(@)"  # 4 projections, 99 nodes: accepted


def balanced(terms: list[str]) -> str:
    """`terms` joined by && in a balanced tree (a flat chain of 45 would be 45 deep)."""
    if len(terms) == 1:
        return terms[0]
    half = len(terms) // 2
    return f"({balanced(terms[:half])} && {balanced(terms[half:])})"


# Many steps for each element of a list (1 projection, 184 nodes): visits, the dearest unit.
VISITS = "items[?" + balanced(["watts > `0`"] * 45) + "]"
ROUNDS = 5


def document(source_of) -> dict:
    return {
        "fields": {
            field.name: {"source": source_of(field), "type": TYPE_OF_KIND[field.kind]} for field in CANONICAL_FIELDS
        }
    }


def push(size: int) -> dict:
    items = [{"sku": f"SKU-{n}", "watts": 400 + n, "note": "panel " * 8} for n in range(max(size // 80, 1))]
    return {"deal": {"name": "Roof", "amount": 12_500}, "items": items}


def best_ms(function, rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def main() -> None:
    plain = parse_mapping_document(document(lambda field: f"deal.{field.name}"))
    for name, source in (("to_string", WORST), ("visits", VISITS)):
        worst = parse_mapping_document(document(lambda field: source))  # noqa: B023
        print(f"\n{name}: {len(worst)} fields mapped with a source of {len(source)} characters")
        print(f"{'push bytes':>10} {'plain ms':>9} {'worst ms':>9} {'issues':>7} {'unbounded, one field ms':>24}")
        for size in (1_000, 10_000, 100_000, 1_000_000):
            data = push(size)
            bytes_ = len(json.dumps(data, separators=(",", ":")))
            result = normalize(data, worst)
            plain_ms = best_ms(lambda: normalize(data, plain))  # noqa: B023
            worst_ms = best_ms(lambda: normalize(data, worst))  # noqa: B023
            if bytes_ <= 100_000:
                unbounded = f"{best_ms(lambda: jmespath.search(source, data), rounds=1):.1f}"  # noqa: B023
            else:
                unbounded = "(not run)"
            print(f"{bytes_:>10,} {plain_ms:>9.2f} {worst_ms:>9.2f} {len(result.issues):>7} {unbounded:>24}")


if __name__ == "__main__":
    main()
