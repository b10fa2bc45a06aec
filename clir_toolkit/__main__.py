"""``python -m clir_toolkit``: the ``clir`` command line (where the script is not on PATH)."""

import sys

from clir_toolkit.launcher import main

sys.exit(main())
