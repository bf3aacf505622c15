"""The allocator settings every served Wharf process runs with (glibc only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from common import memory

ROOT = Path(__file__).resolve().parents[2]
#: In a fresh process (a long-lived one may have free heap to spare), after what ``wharf serve`` does
#: before a service starts: 100 buffers the size a TLS read allocates (uvloop's and asyncio's
#: 256 KiB), each written through as a read fills it; the minor page faults that cost.
FAULTS = """
import resource
from wharf.cli import prepare_process
prepare_process()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(100):
    buffer = bytes([i]) * (256 * 1024)
    del buffer
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(memory._libc() is None, reason="glibc's allocator only")
def test_a_tls_read_buffer_comes_from_the_heap_not_a_fresh_mapping() -> None:
    """With the thresholds at glibc's 128 KiB each buffer is a new mapping: 64 page faults. The
    process starts with them there (glibc's own variables) so that only the start-up's settings
    can keep the buffers on the heap."""
    at_default = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}
    ran = subprocess.run(
        [sys.executable, "-c", FAULTS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **at_default},
    )
    assert ran.returncode == 0, ran.stderr
    assert int(ran.stdout) < 100 * 64 // 4, ran.stdout
