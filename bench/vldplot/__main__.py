"""python3 -m vldplot: the same program as the vld-plot launcher."""
import sys

from vldplot.cli import main

sys.exit(main())
