"""Charts of the compiled module drawn with matplotlib: the same series, titles and
axis labels as the command line's SVGs."""

from __future__ import annotations

from ._frames import floats


def draw(charts, axes=None):
    """Draws each chart (a dict from the compiled module) on its own axes."""
    import matplotlib.pyplot as plt

    if axes is None:
        fig, axes = plt.subplots(len(charts), 1, figsize=(8, 3.2 * len(charts)), squeeze=False)
        axes = axes[:, 0]
    else:
        fig = axes[0].figure
    for ax, c in zip(axes, charts):
        for name, xs, ys, step in c["series"]:
            if step:
                ax.step(floats(xs), floats(ys), where="post", label=name)
            else:
                ax.plot(floats(xs), floats(ys), label=name)
        ax.set_title(c["title"])
        ax.set_xlabel(c["x_label"])
        ax.set_ylabel(c["y_label"])
        if c["x_log"]:
            ax.set_xscale("log")
        if c["y_log"]:
            ax.set_yscale("log")
        if c["series"]:
            ax.legend(fontsize="small")
    fig.tight_layout()
    return fig
