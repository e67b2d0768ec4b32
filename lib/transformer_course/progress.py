"""Progress bars that are stored as their final state in a notebook (used by 11_training).

``tqdm.auto`` shows a widget in a notebook; the widget's ``text/plain`` fallback is captured once,
when the bar is displayed, so every viewer that does not run widgets (GitHub's preview, nbviewer
without widget state, a terminal ``jupyter nbconvert --to markdown``) shows a finished run as
``0%|          | 0/700``. ``progress_bar`` is ``tqdm.auto``'s bar with one difference in a
notebook: the widget is displayed with an empty fallback, and when the bar closes it is hidden
and its final state is printed as a line of text without timings, e.g.
``training: 100%|##########| 700/700, loss=3.62, val=4.73``. That line is what every viewer shows,
and a re-run prints it identically (nbval compares it). Outside a notebook it is plain tqdm.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: The final line: no elapsed time or rate, which change from run to run.
FINAL_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt}{postfix}"
FINAL_FORMAT_NO_TOTAL = "{desc}: {n_fmt}{postfix}"


def progress_bar(iterable: Iterable[Any] | None = None, **kwargs: Any):
    """A ``tqdm.auto`` bar (same arguments) whose notebook output ends as its final state.

    Introduced in 11_training (the training loop's bar).
    Use it as tqdm: ``for x in progress_bar(items, desc="variants"): ...`` or
    ``with progress_bar(total=700, desc="training", unit="step") as bar: bar.update()``.
    """
    from tqdm.auto import tqdm

    try:
        from tqdm.notebook import tqdm_notebook
    except ImportError:  # pragma: no cover - tqdm ships tqdm.notebook
        return tqdm(iterable, **kwargs)
    if not issubclass(tqdm, tqdm_notebook):
        return tqdm(iterable, **kwargs)
    return _stored_final_state(tqdm)(iterable, **kwargs)


def final_line(bar) -> str:
    """The text a closed bar leaves in the notebook: ``desc: 100%|##########| 700/700, k=v``.

    The bar is drawn with the ten-character ASCII/Unicode bar tqdm uses in a terminal.
    """
    info = dict(bar.format_dict)
    info["ncols"] = None  # a notebook bar's ncols may be "100%"; the text bar is 10 wide
    info["bar_format"] = FINAL_FORMAT if info.get("total") else FINAL_FORMAT_NO_TOTAL
    return bar.format_meter(**info)


def _stored_final_state(base: type) -> type:
    """A subclass of the notebook bar class ``base`` that prints its final line on close."""

    class StoredFinalStateBar(base):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["display"] = False  # displayed below, with an empty text fallback
            super().__init__(*args, **kwargs)
            self._shown = False
            container = getattr(self, "container", None)
            if self.disable or container is None:
                return
            from IPython.display import display

            view = {"version_major": 2, "version_minor": 0, "model_id": container.model_id}
            display({"text/plain": "", WIDGET_MIME: view}, raw=True)
            self.displayed = True  # tqdm.notebook must not display it a second time
            self._shown = True

        def close(self) -> None:
            if self.disable:  # closed already (close() runs again from __exit__/__del__)
                return
            shown = getattr(self, "_shown", False)
            super().close()
            if shown and self.leave:
                self.container.layout.display = "none"
                print(final_line(self), file=sys.stdout, flush=True)

    return StoredFinalStateBar
