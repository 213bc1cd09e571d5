"""``python -m autostatic``: see ``autostatic.cli``."""

import sys

from autostatic.cli import main

if __name__ == "__main__":
    sys.exit(main())
