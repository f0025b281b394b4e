"""One way vld-plot makes a figure: matplotlib's Figure itself, not pyplot,
so there is no display backend to choose and no global registry of open
figures to close (a Figure saves a PNG through Agg on its own)."""


def new_figure(**kwargs):
    """A matplotlib Figure (kwargs as Figure's: figsize, layout, ...)."""
    from matplotlib.figure import Figure
    return Figure(**kwargs)
