"""The mapping engine's per-process caches hold at most their bytes, whatever keys and values they are given
(issue #33: a cache bounded by count alone, keyed on a megabyte of text, grew a worker by gigabytes)."""

import contextlib
import tracemalloc

from core.sized_cache import approximate_size, sized_cache
from mappings import converters
from mappings.converters import convert
from mappings.expressions import SOURCE_MAX_CHARS
from mappings.normalization import compile_source
from mappings.source_alternatives import source_alternatives


def traced_growth(action) -> int:
    """Bytes still allocated after `action()` that were not before."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        action()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_a_cache_keeps_its_bytes_and_entries_however_many_large_values_it_is_given():
    calls = []

    @sized_cache(max_entries=1_000, max_bytes=1_000_000, key_max_chars=100)
    def padded(key: str) -> str:
        calls.append(key)
        return key * 1_000

    def fill() -> None:
        for number in range(2_000):
            padded(f"{number:08d}")  # 8,000 characters a value: 16 MB given, at most 1 MB kept

    kept = traced_growth(fill)

    info = padded.cache_info()
    assert info.bytes <= 1_000_000
    assert 100 <= info.currsize < 130  # the newest ones, each about 8 KB
    assert kept < 1_500_000
    assert padded("00001999") == "00001999" * 1_000 and calls.count("00001999") == 1  # the newest kept
    assert padded("00000000") == "00000000" * 1_000 and calls.count("00000000") == 2  # the oldest gone


def test_a_long_key_or_a_value_larger_than_the_cache_is_answered_but_not_kept():
    @sized_cache(max_entries=10, max_bytes=100_000, key_max_chars=100)
    def echo(key: str, times: int = 1) -> str:
        return key * times

    assert echo("x" * 101) == "x" * 101
    assert echo("y", times=200_000) == "y" * 200_000
    assert echo("z", times=3) == "zzz"

    assert echo.cache_info().currsize == 1
    assert echo.cache_info().bytes == approximate_size(("z", ("times", 3))) + approximate_size("zzz")


def test_a_source_over_the_bounds_is_compiled_but_never_becomes_a_cache_key():
    compile_source.cache_clear()
    source_alternatives.cache_clear()
    long_source = " || ".join(f"p{number}" for number in range(300))  # a version stored before the bounds
    assert len(long_source) > SOURCE_MAX_CHARS

    assert compile_source(long_source).search({"p7": 1, "description": "x" * 500}) == 1  # an ordinary record's size
    assert len(source_alternatives(long_source)) == 300
    assert compile_source.cache_info().currsize == 0
    assert source_alternatives.cache_info().currsize == 0


def test_compiled_sources_are_kept_within_their_bytes_however_many_there_are():
    compile_source.cache_clear()

    def fill() -> None:
        for number in range(400):  # each within the bounds: 1,000 characters, a chain of `||` in a balanced tree
            terms = [f"k{number}_{index}" for index in range(120)]
            source = " || ".join(terms)[:SOURCE_MAX_CHARS].rsplit(" || ", 1)[0]
            compile_source(source)

    kept = traced_growth(fill)

    info = compile_source.cache_info()
    assert info.bytes <= info.max_bytes
    assert kept < info.max_bytes + 2_000_000


def test_a_megabyte_phone_number_is_refused_without_becoming_a_cache_key():
    converters._phone_e164.cache_clear()

    def refuse() -> None:
        for number in range(30):
            with contextlib.suppress(converters.ConversionError):
                convert(f"+1 503 {number}" + "5" * 1_000_000, "phone", {"region": "US"})

    kept = traced_growth(refuse)

    assert converters._phone_e164.cache_info().currsize == 0
    assert kept < 100_000
