"""Which roots codelex refuses to index."""

from __future__ import annotations

from pathlib import Path

__all__ = ["refusal_reason"]


def refusal_reason(root: Path) -> str | None:
    """Why codelex refuses to index ``root`` (a resolved path), or None.

    Roots at or above the home directory are refused: indexing them would
    read a user's whole account.
    """
    try:
        home = Path.home().resolve()
    except (RuntimeError, OSError):
        return None
    if root == home or root in home.parents:
        return f"root at/above home directory ({root})"
    return None
