"""``codelex.hybrid``: the original's ranking functions and hybrid chunk search (they live in :mod:`codelex.rank`)."""

from codelex.rank import *  # noqa: F401,F403
from codelex.rank import __all__  # noqa: F401
