"""When the app asks the model server again whether it answers.

A probe is cheap (one small request, ~40 ms), so a server that goes away while the app is
idle is noticed within a few seconds; a server that is not answering is asked again sooner
than one that is, and nothing is asked while a reply streams (the reply says itself when the
server goes, and a busy model gets no extra request). The clock is a parameter, so a test
drives the schedule without waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable

ONLINE_EVERY = 5.0  # seconds between probes while the server answers
OFFLINE_EVERY = 2.0  # ... and while it does not
# A probe whose answer never came (cancelled by another check) is given up after this long.
ANSWER_WITHIN = 10.0


class Prober:
    """The probe schedule: ``due`` says whether to ask now, ``asked`` and ``checked`` move it
    on (see the module)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.next_at = 0.0

    def due(self, *, busy: bool = False) -> bool:
        """Whether to ask the server now (never while ``busy``: a reply is streaming)."""
        return not busy and self.clock() >= self.next_at

    def asked(self) -> None:
        """A probe went out: the next waits for its answer (or ``ANSWER_WITHIN``)."""
        self.next_at = self.clock() + ANSWER_WITHIN

    def checked(self, online: bool) -> None:
        """An answer came: the next probe soon when the server is away, later when it is up."""
        self.next_at = self.clock() + (ONLINE_EVERY if online else OFFLINE_EVERY)
