"""The interim ``python -m codelex QUERY --root DIR`` front end."""

import subprocess
import sys


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "codelex", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_search_a_directory(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "auth.py").write_text("def authenticate_user(name):\n    return check_password(name)\n")
    (tmp_path / "src" / "other.py").write_text("def unrelated():\n    pass\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\x00\x00authenticate")
    result = run("authenticate user", "--root", str(tmp_path))
    assert result.returncode == 0, result.stderr
    ranked = [ln for ln in result.stdout.splitlines() if ln.lstrip()[:2] in ("1.", "2.")]
    first = ranked[0]
    assert "src/auth.py:1" in first and "authenticate_user" in first
    assert "2 files; open" in result.stderr and (tmp_path / ".codelex" / "index.clx").is_file()


def test_exit_codes(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    assert run("kubernetes", "--root", str(tmp_path)).returncode == 1
    bad = run("lang:klingon x", "--root", str(tmp_path))
    assert bad.returncode == 2 and "Unknown lang" in bad.stderr and "Traceback" not in bad.stderr
    missing = run("x", "--root", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr
