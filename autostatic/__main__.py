"""``python -m autostatic``: see ``autostatic.hook.cli``."""

import sys

from autostatic.hook.cli import main

if __name__ == "__main__":
    sys.exit(main())
