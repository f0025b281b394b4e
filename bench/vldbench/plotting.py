"""matplotlib for files only: one place that picks the non-interactive backend."""


def pyplot(who=None):
    """matplotlib.pyplot with the Agg backend (PNG files, no display), or None
    (after saying so, for WHO) when /usr/bin/python3 has no matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if who:
            print(f"{who}: no matplotlib for this python3; no plot")
        return None
    return plt


def save(plt, fig, path, dpi=90, rect=None):
    """Lay FIG out (within RECT, if given), write it to PATH as PNG and free it."""
    if rect is None:
        fig.tight_layout()
    else:
        fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
