"""``python -m wizard_arena.cli``: the ``wizard-arena`` command."""

import sys

from wizard_arena.cli import main

sys.exit(main())
