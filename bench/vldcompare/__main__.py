"""python3 -m vldcompare: vld-compare from the source tree."""
import sys

from vldcompare.cli import main

sys.exit(main())
