"""Widgets of the course, one module per notebook topic.

Each widget is split in two: a plain function that computes what to show from
the knob values (tested in ``tests/`` without a browser) and a thin ipywidgets
wrapper that calls it. Only ipywidgets features present in both 7.7 (Colab)
and 8.x are used.
"""
