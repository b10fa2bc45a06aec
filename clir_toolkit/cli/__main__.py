"""``python -m clir_toolkit.cli``: the ``clir`` command."""

import sys

from clir_toolkit.cli import main

sys.exit(main())
