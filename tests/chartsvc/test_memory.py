"""The allocator settings a chartsvc library (and so the console) runs with (glibc only)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chartsvc.repos import memory

ROOT = Path(__file__).resolve().parents[2]
#: In a fresh process (a long-lived one may have free heap to spare): 100 buffers the size a TLS
#: read allocates (uvloop's and asyncio's 256 KiB), each written through as a read fills it; the
#: minor page faults that cost.
FAULTS = """
import resource
from chartsvc.repos import memory
memory.tune_allocator()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(100):
    buffer = bytes([i]) * (256 * 1024)
    del buffer
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(memory._libc() is None, reason="glibc's allocator only")
def test_a_tls_read_buffer_comes_from_the_heap_not_a_fresh_mapping() -> None:
    """With the threshold at glibc's 128 KiB each buffer is a new mapping: 64 page faults."""
    ran = subprocess.run(
        [sys.executable, "-c", FAULTS], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert ran.returncode == 0, ran.stderr
    assert int(ran.stdout) < 100 * 64 // 4, ran.stdout
