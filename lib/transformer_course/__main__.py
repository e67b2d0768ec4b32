"""``python -m transformer_course train | generate | check``: the command line lives in :mod:`.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
