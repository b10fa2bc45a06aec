"""``python -m clir_toolkit.cli``: the ``clir`` command."""

import sys

from clir_toolkit.cli import main
from clir_toolkit.errors import forget_caught_interrupts

sys.exit(forget_caught_interrupts(main()))
