"""The RoPE explorer of 13_modern_blocks.

Knobs: a position m, a feature pair i, the head size D and the base. :func:`rope_view` is the
plain function — it returns a Figure, or a message string for knob values that make no
rotation — and :func:`rope_widget` is the thin ipywidgets wrapper.

Left panel: pair i of a fixed vector, rotated to positions 0 … m (angle m · θ_i with
θ_i = base^(−2i/D)). Right panel: the dot product of a rotated query and key, which depends
only on the offset between their positions.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from ..positional import apply_rope


def check_rope_knobs(position: int, pair: int, head_dim: int, base: float) -> str | None:
    """A message explaining why these knob values give no rotation, or ``None`` when they are fine."""
    if head_dim < 2 or head_dim % 2:
        return (
            f"head size D = {head_dim} is refused: RoPE rotates features in pairs (2i, 2i+1), "
            f"so D must be even. Try {head_dim + 1 if head_dim % 2 else 2}."
        )
    if not 0 <= pair < head_dim // 2:
        return f"pair must be between 0 and D/2 − 1 = {head_dim // 2 - 1} (got {pair})."
    if position < 0:
        return f"position must be 0 or more (got {position})."
    if not base > 1.0:
        return f"base must be greater than 1 (got {base}); otherwise no pair turns more slowly than another."
    return None


def rope_theta(pair: int, head_dim: int, base: float = 10000.0) -> float:
    """θ_i = base^(−2i/D): how many radians pair ``pair`` turns per position."""
    return base ** (-2 * pair / head_dim)


def rope_view(position: int = 3, pair: int = 0, head_dim: int = 16, base: float = 10000.0) -> Figure | str:
    """Pair ``pair`` of a fixed vector rotated to positions 0 … ``position``, and the rotated
    query·key score against the offset m − n; a message string for bad knobs."""
    problem = check_rope_knobs(position, pair, head_dim, base)
    if problem is not None:
        return problem
    theta = rope_theta(pair, head_dim, base)
    x = torch.zeros(position + 1, head_dim, dtype=torch.float64)  # (T, D) the same vector at every position
    x[:, 2 * pair], x[:, 2 * pair + 1] = 1.0, 0.4
    rotated = apply_rope(x, base=base)[:, 2 * pair : 2 * pair + 2]  # (T, D) -> (T, 2) the chosen pair

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
    colours = plt.get_cmap("viridis")(torch.linspace(0, 1, position + 1).numpy())
    for m, (u, v) in enumerate(rotated.tolist()):
        last = m == position
        left.annotate(
            "", xy=(u, v), xytext=(0, 0),
            arrowprops={"arrowstyle": "->", "color": colours[m], "linewidth": 2.5 if last else 1.0},
        )
        if last or position <= 12:
            left.text(u * 1.08, v * 1.08, f"m={m}", fontsize=8, ha="center", va="center")
    radius = math.hypot(1.0, 0.4)
    circle = torch.linspace(0, 2 * math.pi, 200)
    left.plot(radius * torch.cos(circle), radius * torch.sin(circle), color="lightgray", linewidth=0.8)
    left.set_aspect("equal")
    left.set_xlim(-1.35, 1.35)
    left.set_ylim(-1.35, 1.35)
    left.set_xlabel(f"x[{2 * pair}]")
    left.set_ylabel(f"x[{2 * pair + 1}]")
    left.set_title(f"pair i={pair}: θ = {theta:.4g} rad per position, angle at m={position}: {position * theta:.3g} rad")
    left.grid(alpha=0.3)

    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, head_dim, generator=generator, dtype=torch.float64)  # (D,), (D,)
    span = 32
    positions = torch.arange(2 * span + 1, dtype=torch.float64)  # (P,)
    keys = apply_rope(k.expand(len(positions), head_dim), positions=positions, base=base)  # (P, D)
    for m in (span, span + 5):
        query = apply_rope(q.expand(len(positions), head_dim), positions=positions, base=base)[m]  # (D,)
        scores = keys @ query  # (P, D) @ (D,) -> (P,)
        right.plot((m - positions).numpy(), scores.numpy(), marker=".", markersize=3, label=f"query at m={m}")
    right.set_xlabel("offset m − n (query position − key position)")
    right.set_ylabel("rotated q · k")
    right.set_title("the score depends only on the offset: the curves coincide")
    right.legend(loc="lower left", fontsize=8)
    right.grid(alpha=0.3)
    return fig


def rope_widget(position: int = 3, pair: int = 0, head_dim: int = 16):
    """Sliders for the position, the pair and the head size (odd sizes are refused with a
    message) over :func:`rope_view`."""
    import ipywidgets as widgets
    from IPython.display import display

    pos = widgets.IntSlider(value=position, min=0, max=40, description="position m")
    which = widgets.IntSlider(value=pair, min=0, max=31, description="pair i")
    size = widgets.IntSlider(value=head_dim, min=1, max=64, description="head size D")
    base = widgets.FloatSlider(value=10000.0, min=2.0, max=20000.0, step=100.0, description="base")

    def draw(m: int, i: int, d: int, b: float) -> None:
        result = rope_view(m, i, d, b)
        if isinstance(result, str):
            print(result)
        else:
            display(result)
            plt.close(result)

    out = widgets.interactive_output(draw, {"m": pos, "i": which, "d": size, "b": base})
    return widgets.VBox([widgets.HBox([pos, which]), widgets.HBox([size, base]), out])
