"""A wall-clock bound on one piece of work inside a command: one definition of ``run``,
one step of ``steps``.

The command's own ``--timeout`` (:mod:`symbolic_attn.cli`) stops the whole command; a
:class:`Deadline` stops only the piece it guards, so that the others still get their
turn.  It uses SIGALRM, so it acts only in the main thread (elsewhere it guards nothing
and the command's budget remains the backstop); the command's alarm is suspended meanwhile
and re-armed with what is left of it, and when the command's alarm is due first it is
left alone.  On expiry the work is interrupted and ``expired(name, seconds)`` -- the
exception the caller wants in its place -- is raised instead.

>>> import time
>>> guard = Deadline(0.05, lambda name, seconds: ValueError(f"{name}: over {seconds:g} s"))
>>> with guard("nap"):
...     time.sleep(0.01)
>>> try:
...     with guard("long nap"):
...         time.sleep(2)
... except ValueError as error:
...     print(error)
long nap: over 0.05 s
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType, TracebackType

from symbolic_attn.errors import TimeLimitError

__all__ = ["Deadline"]


class _Expired(TimeLimitError):
    """The alarm (a TimeLimitError, so that nothing on the way catches it as an error)."""


class Deadline:
    """A reusable context manager: ``with deadline(name): ...`` bounds the block to
    ``seconds`` of wall-clock time."""

    def __init__(self, seconds: float, expired: Callable[[str, float], BaseException]):
        self.seconds = seconds
        self.expired = expired
        self.name = ""

    def __call__(self, name: str) -> Deadline:
        self.name = name
        return self

    def __enter__(self) -> Deadline:
        can = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        remaining, interval = signal.getitimer(signal.ITIMER_REAL) if can else (0, 0)
        self.active = can and not (remaining and remaining <= self.seconds)
        self.done = False
        if self.active:
            self.outer = (signal.getsignal(signal.SIGALRM), remaining, interval)
            self.start = time.monotonic()
            signal.signal(signal.SIGALRM, self._ring)
            signal.setitimer(signal.ITIMER_REAL, self.seconds, 0.25)
        return self

    def _ring(self, signum: int, frame: FrameType | None) -> None:
        if self.done:  # the work finished just as the alarm rang
            return
        raise _Expired(f"{self.name}: more than {self.seconds:g} s")

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.done = True
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            handler, remaining, interval = self.outer
            signal.signal(signal.SIGALRM, handler)
            if remaining:
                signal.setitimer(signal.ITIMER_REAL, max(remaining - (time.monotonic() - self.start), 0.001), interval)
        if isinstance(error, _Expired):
            raise self.expired(self.name, self.seconds) from None
