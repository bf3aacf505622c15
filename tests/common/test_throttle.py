"""The sign-in throttle on its own clock: free failures, doubling locks, per-key, bounded memory."""

from __future__ import annotations

import pytest

from common.throttle import LoginThrottle, TooManyAttempts, login_keys


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_locks_double_from_the_last_free_failure_and_expire() -> None:
    clock = Clock()
    throttle = LoginThrottle(free_failures=3, clock=clock)
    keys = login_keys("Alice", "10.0.0.1")
    for _ in range(2):
        throttle.failed(keys)
        throttle.check(keys)  # still free
    throttle.failed(keys)  # the third locks for 1 s
    with pytest.raises(TooManyAttempts) as caught:
        throttle.check(keys)
    assert caught.value.status == 429
    assert caught.value.headers["Retry-After"] == "1"
    clock.now += 1.01
    throttle.check(keys)
    throttle.failed(keys)  # the fourth: 2 s
    clock.now += 1.5
    with pytest.raises(TooManyAttempts):
        throttle.check(keys)
    clock.now += 0.6
    throttle.check(keys)


def test_an_account_is_counted_per_address_and_an_address_over_all_accounts() -> None:
    clock = Clock()
    throttle = LoginThrottle(free_failures=2, address_free_failures=3, clock=clock)
    throttle.failed(login_keys("alice", "10.0.0.1"))
    throttle.failed(login_keys("ALICE ", "10.0.0.1"))  # the same account, spelled otherwise
    with pytest.raises(TooManyAttempts):
        throttle.check(login_keys("alice", "10.0.0.1"))  # locked from that address
    throttle.check(login_keys("alice", "10.0.0.9"))  # not from another one
    throttle.check(login_keys("bob", "10.0.0.1"))  # the address has budget left
    throttle.failed(login_keys("bob", "10.0.0.1"))  # the address's third failure
    with pytest.raises(TooManyAttempts):
        throttle.check(login_keys("carol", "10.0.0.1"))  # its budget is spent, for every name
    throttle.succeeded(login_keys("alice", "10.0.0.1")[0])
    with pytest.raises(TooManyAttempts):
        throttle.check(login_keys("alice", "10.0.0.1"))  # a success does not refill the address


def test_guessing_from_elsewhere_never_locks_out_the_right_password() -> None:
    """Issue 39, item 4: five wrong passwords a second for the admin from one address."""
    clock = Clock()
    throttle = LoginThrottle(clock=clock)
    for _ in range(200):
        throttle.failed(login_keys("admin", "10.6.6.6"))
        clock.now += 0.2
    with pytest.raises(TooManyAttempts):
        throttle.check(login_keys("admin", "10.6.6.6"))
    throttle.check(login_keys("admin", "10.0.0.1"))


def test_failures_outside_the_window_start_over() -> None:
    clock = Clock()
    throttle = LoginThrottle(free_failures=2, window_s=60, clock=clock)
    keys = login_keys("alice", None)
    throttle.failed(keys)
    clock.now += 61
    throttle.failed(keys)
    throttle.check(keys)


def test_memory_is_bounded() -> None:
    throttle = LoginThrottle(free_failures=0, max_keys=100, clock=Clock())
    for i in range(1000):
        throttle.failed(login_keys(f"user{i}", None))
    with pytest.raises(TooManyAttempts):
        throttle.check(login_keys("user999", None))
    throttle.check(login_keys("user0", None))  # dropped, the oldest first
