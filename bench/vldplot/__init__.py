"""vldplot: vld-plot, the pictures of vld's tools drawn with matplotlib.

Subcommands (cli.py): ``layout``, a picture of an image's platters from
``vld-inspect --json`` (layout.py). Installed by ``cmake --install`` under
share/vld/python with the ``vld-plot`` launcher in bin (tools/plot/).
"""
