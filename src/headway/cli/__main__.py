"""``python -m headway.cli``: the same as the ``headway`` command."""

import sys

from headway.cli.commands import main

sys.exit(main())
