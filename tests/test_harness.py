"""The test process's own safeguards (``tests/conftest.py``)."""

from __future__ import annotations

import ast
import gc
import threading
import time

# An expression whose tree takes a few milliseconds to build: long enough for threads to meet.
SOURCE = "x = (" + " + ".join(f"f(a{i}, [b, c], {{d: e}})" for i in range(300)) + ")\n"


class Finalised:
    """Garbage whose finaliser runs Python code, so the collector hands the GIL to another thread
    in the middle of building a tree."""

    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it

    def __del__(self) -> None:
        sum(range(2000))


def test_threads_parsing_at_once_do_not_break_each_others_parse() -> None:
    # Without the lock around ast.parse, CPython 3.11 fails several of these a second with
    # "AST constructor recursion depth mismatch" (what killed xdist workers reporting a failure).
    stop = threading.Event()

    def other() -> None:
        while not stop.is_set():
            ast.parse(SOURCE)

    threshold = gc.get_threshold()
    # Young collections only, and often: each runs the finalisers of the cycles made since the
    # last; full collections of a test worker's heap would make each parse take ~100 ms.
    gc.set_threshold(50, 1_000_000, 1_000_000)
    thread = threading.Thread(target=other, daemon=True)
    thread.start()
    errors, parses = [], 0
    try:
        started = time.monotonic()
        # two seconds, and at least 40 parses however slow a loaded machine makes them
        while time.monotonic() - started < 2 or (parses < 40 and time.monotonic() - started < 30):
            Finalised()
            try:
                ast.parse(SOURCE)
            except SystemError as exc:
                errors.append(str(exc))
            parses += 1
    finally:
        stop.set()
        thread.join()
        gc.set_threshold(*threshold)
    assert parses >= 40
    assert not errors, f"{len(errors)} of {parses} parses failed: {errors[0]}"
