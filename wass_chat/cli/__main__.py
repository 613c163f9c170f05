"""``python -m wass_chat.cli``: the same as the ``wass-chat`` console script."""

import sys

from wass_chat.cli import main

sys.exit(main())
