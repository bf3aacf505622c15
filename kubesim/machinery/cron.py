"""Cron schedules as CronJobs read them: five fields, names, steps, ranges and ``@`` macros.

Semantics follow robfig/cron's standard parser that the CronJob controller uses: ``*``, ``?``,
lists, ``a-b``, ``*/n`` and ``a-b/n``; month and weekday names; day-of-month and day-of-week are
OR-ed when both are restricted; ``@yearly``, ``@monthly``, ``@weekly``, ``@daily``, ``@hourly``.
"""

from __future__ import annotations

import datetime

import attrs

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_NAMES = {
    **{
        m: i
        for i, m in enumerate(
            ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
        )
    },
    **{d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))},
}
_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))


class CronError(ValueError):
    pass


def _value(text: str) -> int:
    key = text.lower()
    if key in _NAMES:
        return _NAMES[key]
    if not text.isdigit():
        raise CronError(
            f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
        )
    return int(text)


def _field(text: str, low: int, high: int) -> tuple[frozenset[int], bool]:
    """The allowed values, and whether the field was restricted (not ``*``/``?``)."""
    values: set[int] = set()
    restricted = True
    for part in text.split(","):
        rng, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if step <= 0:
            raise CronError(f"step of range should be a positive number: {part}")
        if rng in ("*", "?"):
            lo, hi = low, high
            restricted = restricted and bool(step_text)
        elif "-" in rng:
            a, b = rng.split("-", 1)
            lo, hi = _value(a), _value(b)
        else:
            lo = _value(rng)
            hi = high if step_text else lo
        if hi == 7 and high == 6:
            hi = 6 if lo <= 6 else 0
        if lo < low:
            raise CronError(f"beginning of range ({lo}) below minimum ({low}): {part}")
        if hi > high:
            raise CronError(f"end of range ({hi}) above maximum ({high}): {part}")
        if lo > hi:
            raise CronError(f"beginning of range ({lo}) beyond end of range ({hi}): {part}")
        values.update(range(lo, hi + 1, step))
    return frozenset(v % 7 if high == 6 else v for v in values), restricted


@attrs.frozen
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    days_restricted: bool
    weekdays_restricted: bool

    def _day_matches(self, d: datetime.date) -> bool:
        dom = d.day in self.days
        dow = (d.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return dom or dow
        return dom and dow

    def next_after(self, t: datetime.datetime) -> datetime.datetime | None:
        """The first scheduled minute strictly after ``t`` (an aware datetime), within 5 years."""
        start = (t + datetime.timedelta(minutes=1)).replace(second=0, microsecond=0)
        for offset in range(366 * 5):
            day = (start + datetime.timedelta(days=offset)).date()
            if day.month not in self.months or not self._day_matches(day):
                continue
            for hour in sorted(self.hours):
                for minute in sorted(self.minutes):
                    candidate = datetime.datetime(
                        day.year, day.month, day.day, hour, minute, tzinfo=t.tzinfo
                    )
                    if candidate >= start:
                        return candidate
        return None


def parse(text: str) -> Schedule:
    spec = text.strip()
    if spec.startswith(("TZ=", "CRON_TZ=")):
        raise CronError("CronJob.spec.schedule must not contain TZ; use spec.timeZone")
    spec = MACROS.get(spec.lower(), spec)
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    parsed = [_field(f, lo, hi) for f, (lo, hi) in zip(fields, _BOUNDS, strict=True)]
    return Schedule(
        parsed[0][0],
        parsed[1][0],
        parsed[2][0],
        parsed[3][0],
        parsed[4][0],
        parsed[2][1],
        parsed[4][1],
    )
