"""The export's read-ahead (exports.snapshot._read_ahead): chunks in order, a fetch's error raised to the reader, and
a reader that stops early stops the thread."""

import threading

import pytest

from exports.snapshot import _read_ahead


def fetches(*chunks):
    remaining = list(chunks)

    def fetch():
        item = remaining.pop(0) if remaining else []
        if isinstance(item, Exception):
            raise item
        return item

    return fetch


def test_chunks_come_in_order_until_an_empty_one():
    assert list(_read_ahead(fetches([1, 2], [3], [4, 5], [], [6]))) == [[1, 2], [3], [4, 5]]


def test_a_failed_fetch_is_raised_to_the_reader_after_the_chunks_before_it():
    chunks = _read_ahead(fetches([1], RuntimeError("connection lost")))

    assert next(chunks) == [1]
    with pytest.raises(RuntimeError, match="connection lost"):
        next(chunks)


def test_a_reader_that_stops_early_stops_the_thread():
    endless = _read_ahead(lambda: [0])
    next(endless)

    endless.close()

    assert not [thread for thread in threading.enumerate() if thread.name == "export-read-ahead"]
