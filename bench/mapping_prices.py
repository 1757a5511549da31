"""What each step of a mapping's evaluation costs here, beside the units mappings/evaluation.py and
mappings/converters.py price it at (issue #33): each price should be at least the measured nanoseconds.

    flock /tmp/bench.lock .venv/bin/python bench/mapping_prices.py

In-process, no database: each step is timed (CPU, least of `--rounds`) over many of its kind, through the
service's own bounded interpreter given an allowance it never reaches, and divided by their number. The
conversions are timed on values no cache has seen.
"""

import argparse
import contextlib
import time

import _setup  # noqa: F401  (Django's settings)

from mappings import converters, evaluation
from mappings.converters import CONVERSION_UNITS, FORMAT_UNITS, TEXT_CHARACTER_UNITS, convert
from mappings.evaluation import BoundedExpression, EvaluationBudget, PushPool
from mappings.expressions import parsed_tree

COUNT = 200_000


def least_ns(action, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time_ns()
        action()
        best = min(best, time.process_time_ns() - started)
    return best


def evaluated(source: str, data: dict, rounds: int) -> float:
    """CPU ns of evaluating `source` over `data` as a push's rule does."""
    expression = BoundedExpression(parsed_tree(source))

    def run() -> None:
        pool = PushPool(data)
        pool.left = pool.allowance = 1 << 60
        expression.search(data, EvaluationBudget(data, pool))

    return least_ns(run, rounds)


def conversion_ns(mapping_type: str, values: list, options: dict, rounds: int) -> float:
    def run() -> None:
        converters._email_valid.cache_clear()
        converters._phone_e164.cache_clear()
        for value in values:
            with contextlib.suppress(converters.ConversionError):
                convert(value, mapping_type, options)

    return least_ns(run, rounds) / len(values)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rounds = args.rounds
    numbers = {
        "a": list(range(COUNT)),
        "o": [{"b": n} for n in range(COUNT)],
        "d": {f"k{n}": n for n in range(COUNT)},
        "s": "7" * COUNT * 10,
    }
    visit = evaluated("o[*].b", numbers, rounds) / COUNT  # a field visited for each element
    call = evaluated("a[*].abs(@)", numbers, rounds) / COUNT - 2 * visit  # and the function's node and argument
    rows = [
        ("visit (a node, for each element)", visit, evaluation.VISIT_UNITS),
        ("call (a function called)", call, evaluation.CALL_UNITS),
        ("element (a Python loop reads: sum)", evaluated("sum(a)", numbers, rounds) / COUNT, evaluation.ELEMENT_UNITS),
        (
            "element (sort_by's key, each)",
            evaluated("sort_by(o, &b)", numbers, rounds) / COUNT - visit,
            2 * evaluation.ELEMENT_UNITS + 18 * evaluation.COPY_UNITS,
        ),
        ("copy (C copies: reverse)", evaluated("reverse(a)", numbers, rounds) / COUNT, evaluation.COPY_UNITS),
        (
            "member (C puts into an object: merge)",
            evaluated("merge(d, d)", numbers, rounds) / (2 * COUNT),
            evaluation.MEMBER_UNITS,
        ),
        (
            "character (C reads: starts_with)",
            evaluated("starts_with(s, s)", numbers, rounds) / (20 * COUNT),
            evaluation.CHARACTER_UNITS,
        ),
        (
            "character (C writes: join)",
            evaluated("join(s, [s, s])", numbers, rounds) / (30 * COUNT),
            evaluation.CHARACTER_UNITS,
        ),
        (
            "escaped character (to_string of a string)",
            evaluated("to_string([s])", numbers, rounds) / (10 * COUNT),
            evaluation.ESCAPED_CHARACTER_UNITS,
        ),
        ("piece (to_string of a number)", evaluated("to_string(a)", numbers, rounds) / COUNT, evaluation.PIECE_UNITS),
    ]
    count = 2_000
    conversions = {
        "string": ([f"text {n}" for n in range(count)], {}),
        "integer": ([f"{n}12345678901234567890" for n in range(count)], {}),
        "decimal": ([f"{n}.1234567890123456789e-3" for n in range(count)], {}),
        "boolean": (["yes", "no", "maybe"] * (count // 3), {}),
        "date": ([f"2026-03-{n % 28 + 1:02d}T10:00:00+02:00" for n in range(count)], {}),
        "datetime": ([f"2026-03-{n % 28 + 1:02d} 10:00:00.123456+0200" for n in range(count)], {}),
        "email": ([f"first.last.{n}@sub.example-domain.com" for n in range(count)], {}),
        "phone": ([f"(503) {n % 800 + 200:03d}-{n:04d}" for n in range(count)], {"region": "US"}),
        "enum": ([f"Value {n}" for n in range(count)], {"values": {f"value {n}": "lead" for n in range(500)}}),
    }
    for mapping_type, (values, options) in conversions.items():
        text = sum(len(value) for value in values) / len(values)
        price = CONVERSION_UNITS[mapping_type] + TEXT_CHARACTER_UNITS * text
        rows.append((f"convert {mapping_type}", conversion_ns(mapping_type, values, options, rounds), price))
    formats = [f"%d.%m.%Y {n}" for n in range(20)]
    dates = [f"{n % 28 + 1:02d}.03.2026 x" for n in range(count)]
    date_ns = conversion_ns("date", dates, {"formats": formats}, rounds)
    rows.append(("convert date, 20 formats tried", date_ns, CONVERSION_UNITS["date"] + 20 * FORMAT_UNITS))
    print(f"{'step':45s} {'measured ns':>12s} {'price units':>12s} {'measured/price':>15s}")
    for name, measured, price in rows:
        print(f"{name:45s} {measured:12.1f} {price:12.0f} {measured / price:15.2f}")


if __name__ == "__main__":
    main()
