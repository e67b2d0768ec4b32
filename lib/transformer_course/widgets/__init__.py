"""Widgets of the course, one module per notebook topic.

Each widget is split in two: a plain function that computes what to show from
the knob values (tested in ``tests/`` without a browser) and a thin ipywidgets
wrapper that calls it. Only ipywidgets features present in both 7.7 (Colab)
and 8.x are used.
"""


def figure_output(view, knobs: dict):
    """``interactive_output`` that shows ``view(**values)`` for the knobs' values: a Figure (closed
    after display, so it is drawn once), or the message string a view returns for bad knobs.

    The three figure widgets (03, 05, 07) share it; their views are plain functions, tested apart.
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    from IPython.display import display

    def draw(**values) -> None:
        result = view(**values)
        if isinstance(result, str):
            print(result)
        else:
            display(result)
            plt.close(result)

    return widgets.interactive_output(draw, knobs)
