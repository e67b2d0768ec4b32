"""Stopping a training run cleanly (11_training): signals become a request the loop honours.

``train`` stops after the current step, saves a checkpoint and returns when Ctrl-C (or Jupyter's
stop button), SIGTERM or SIGHUP arrives (:class:`InterruptGuard`). :class:`StepWatch` knows
whether the optimizer is in the middle of updating the weights, where an interrupt that gets
through anyway (a second Ctrl-C, or one outside the main thread) must not be followed by a save.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any

import torch

from ..i18n import _

#: The signals that stop a run after its current step, with a checkpoint: Ctrl-C (and Jupyter's
#: stop button), SIGTERM (kill, timeout, docker stop, batch schedulers, torchrun) and SIGHUP
#: (a closed terminal). SIGHUP does not exist on Windows.
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class InterruptGuard:
    """Turns Ctrl-C, SIGTERM and SIGHUP into a request that the loop honours between steps.

    An interrupt that lands inside ``optimizer.step()`` would leave half-updated weights; with
    this guard the step finishes, a checkpoint is written, then the loop stops. A second signal
    interrupts at once (no checkpoint). Only the main thread can install signal handlers; in other
    threads the guard does nothing and a KeyboardInterrupt arrives wherever it arrives.
    """

    def __init__(self, announce: bool = True) -> None:
        self.requested = False
        self.forced = False
        self.signal_name = ""
        self.announce = announce
        self._previous: dict[int, Any] = {}

    def _handler(self, signum, frame) -> None:  # noqa: ARG002 - signal handler signature
        if self.requested:
            self.forced = True
            self._restore()
            raise KeyboardInterrupt
        self.requested = True
        self.signal_name = signal.Signals(signum).name
        if self.announce:
            # os.write, not print: a handler may run in the middle of another write to stderr.
            with contextlib.suppress(OSError):
                os.write(
                    2,
                    (
                        "\n"
                        + _(
                            "{signal}: stopping after this step and saving a checkpoint "
                            "(a second Ctrl-C stops at once, without saving)"
                        ).format(signal=self.signal_name)
                        + "\n"
                    ).encode(),
                )

    def _restore(self) -> None:
        for signum, previous in self._previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(
                    signum,
                    previous
                    if previous is not None
                    else (
                        signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
                    ),
                )
        self._previous = {}

    def __enter__(self) -> InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                # ValueError/OSError: e.g. an embedded interpreter without signals
                with contextlib.suppress(ValueError, OSError):
                    self._previous[signum] = signal.signal(signum, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        self._restore()


class StepWatch:
    """Whether ``optimizer.step()`` is running right now, from the optimizer's own step hooks.

    A KeyboardInterrupt raised inside the step leaves the weights half-updated; ``train`` then
    keeps the last good checkpoint instead of saving over it. Used as a context manager, the
    hooks are removed again on exit, so a caller's optimizer is left as it came.
    """

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.optimizer = optimizer
        self.updating = False
        self._handles: list[Any] = []

    def _set(self, value: bool):
        def hook(*_args: Any) -> None:
            self.updating = value

        return hook

    def __enter__(self) -> StepWatch:
        self._handles = [
            self.optimizer.register_step_pre_hook(self._set(True)),
            self.optimizer.register_step_post_hook(self._set(False)),
        ]
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
