"""Seeded value helpers for the samplers: every draw goes through one `random.Random`.

Numbers are drawn as whole multiples of their precision (cents, tenths) and divided once,
so their JSON form is short and the prose can print exactly the same digits.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from typing import TypeVar

from edgebench.datagen.edgejson import vocab

T = TypeVar("T")

# All dates fall in one calendar year so prose and JSON agree on a plain ISO date.
_FIRST_DAY = dt.date(2025, 1, 1)


class Draw:
    """The random choices a sampler makes, with the project's formatting built in."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, options: Sequence[T]) -> T:
        return self.rng.choice(options)

    def some(self, options: Sequence[T], low: int, high: int) -> list[T]:
        """Between `low` and `high` distinct options, in a random order."""
        return self.rng.sample(list(options), self.rng.randint(low, high))

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def decimal(self, low: float, high: float, places: int) -> float:
        scale = 10**places
        return round(self.rng.randint(round(low * scale), round(high * scale)) / scale, places)

    def money(self, low: float, high: float) -> float:
        return self.decimal(low, high, 2)

    def chance(self, probability: float) -> bool:
        return self.rng.random() < probability

    def digits(self, count: int) -> str:
        return "".join(str(self.rng.randint(0, 9)) for _ in range(count))

    def code(self, prefix: str, count: int) -> str:
        """An identifier like `PO-48213`; the first digit is never 0 so it reads as a code."""
        return f"{prefix}{self.rng.randint(1, 9)}{self.digits(count - 1)}"

    def date(self) -> str:
        return (_FIRST_DAY + dt.timedelta(days=self.rng.randint(0, 364))).isoformat()

    def clock(self, first_hour: int = 6, last_hour: int = 22) -> str:
        """A 24-hour HH:MM time on a five-minute grid, as people write times."""
        return f"{self.rng.randint(first_hour, last_hour):02d}:{self.rng.randrange(0, 60, 5):02d}"

    def timestamp(self) -> str:
        """An RFC 3339 UTC date-time, as a device log writes it."""
        time = f"{self.rng.randint(0, 23):02d}:{self.rng.randint(0, 59):02d}"
        return f"{self.date()}T{time}:{self.rng.randint(0, 59):02d}Z"

    def city(self) -> str:
        return self.pick(vocab.CITIES)[0]

    def person(self) -> str:
        return f"{self.pick(vocab.FIRST_NAMES)} {self.pick(vocab.LAST_NAMES)}"

    def email(self, name: str) -> str:
        local = ".".join(name.lower().replace(".", "").split())
        return f"{local}@{self.pick(vocab.EMAIL_DOMAINS)}"
