"""``python -m codelex``: the same as the ``codelex`` command (see :mod:`codelex.cli`)."""

import sys

from codelex.cli import main

if __name__ == "__main__":
    sys.exit(main())
