"""``python -m wizard_bots.misbehaving KIND ...``"""

import sys

from wizard_bots.misbehaving.runner import main

sys.exit(main())
