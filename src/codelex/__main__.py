"""``python -m codelex``: the same as the ``codelex`` command (see :mod:`codelex._launch` and :mod:`codelex.cli`)."""

import sys

from codelex._launch import main

if __name__ == "__main__":
    sys.exit(main())
