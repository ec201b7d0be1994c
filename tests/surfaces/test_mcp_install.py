"""``codelex mcp install|uninstall CLIENT``: each client's documented file, edited in place and nothing else.

Every test works in a temporary home and project (HOME, XDG_CONFIG_HOME, CODEX_HOME and the current
directory are monkeypatched): the real home is never read or written.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from codelex.cli import main
from codelex.mcp_install import CLIENTS, client_named

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

COMMAND = os.path.abspath(sys.executable)
ARGS = ["-m", "codelex", "mcp"]


@pytest.fixture
def places(tmp_path, monkeypatch):
    """``(home, project)``: a private home and a git project inside it, the project the current directory."""
    home = tmp_path / "home"
    project = home / "work" / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for name in ("XDG_CONFIG_HOME", "CODEX_HOME", "APPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(project)
    return home, project


def cli(capsys, *argv) -> tuple[int, str, str]:
    status = main(["mcp", *argv])
    out, err = capsys.readouterr()
    return status, out, err


# Where each client keeps its servers, per scope (POSIX, Linux paths), and the container of our entry.
FILES = {
    ("claude", "user"): ".claude.json", ("claude", "project"): "P/.mcp.json",
    ("cursor", "user"): ".cursor/mcp.json", ("cursor", "project"): "P/.cursor/mcp.json",
    ("codex", "user"): ".codex/config.toml", ("codex", "project"): "P/.codex/config.toml",
    ("vscode", "user"): ".config/Code/User/mcp.json", ("vscode", "project"): "P/.vscode/mcp.json",
    ("windsurf", "user"): ".codeium/windsurf/mcp_config.json",
    ("zed", "user"): ".config/zed/settings.json", ("zed", "project"): "P/.zed/settings.json",
}
DEFAULT_SCOPE = {"claude": "user", "cursor": "user", "codex": "user", "vscode": "project", "windsurf": "user",
                 "zed": "user"}
CASES = [pytest.param(client, scope, id=f"{client}-{scope}") for client, scope in FILES]
linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the user files' paths checked are Linux's")


def where(places, client: str, scope: str) -> Path:
    home, project = places
    rel = FILES[(client, scope)]
    return project / rel[2:] if rel.startswith("P/") else home / rel


def load(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def entry_of(client: str, data: dict, name: str = "codelex") -> dict:
    return data[client_named(client).container][name]


def check_entry(client: str, entry: dict, args=ARGS) -> None:
    """Our entry, in the shape the client's documentation gives a stdio server."""
    assert entry["command"] == COMMAND and entry["args"] == args
    if client in ("claude", "vscode"):
        assert entry["type"] == "stdio"
    if client == "zed":
        assert entry["env"] == {}


def test_the_table():
    assert {c.name for c in CLIENTS} == {"claude", "cursor", "codex", "vscode", "windsurf", "zed"}
    assert client_named("claude-code").name == "claude" and client_named("Code").name == "vscode"
    for client in CLIENTS:
        assert client.docs and all(url.startswith("https://") for url in client.docs)
        assert client.default_scope == DEFAULT_SCOPE[client.name]


@linux_only
@pytest.mark.parametrize("client,scope", CASES)
def test_install_writes_the_documented_shape(client, scope, places, capsys):
    status, out, err = cli(capsys, "install", client, "--scope", scope)
    assert status == 0, err
    path = where(places, client, scope)
    assert str(path) in out
    check_entry(client, entry_of(client, load(path)))
    if scope == "user":
        assert path.stat().st_mode & 0o777 == 0o600  # names a command the client runs: owner-only
    # again: one entry, updated in place; the file is not rewritten when nothing changes
    before = path.read_bytes()
    status, out, _ = cli(capsys, "install", client, "--scope", scope)
    assert status == 0 and "already up to date" in out and path.read_bytes() == before


@linux_only
@pytest.mark.parametrize("client", [c.name for c in CLIENTS])
def test_default_scope(client, places, capsys):
    assert cli(capsys, "install", client)[0] == 0
    assert where(places, client, DEFAULT_SCOPE[client]).is_file()


# An existing file of each format, with other servers and keys, in the file's own layout.
OTHER_JSON = """{
    "theme": "dark",
    "%s": {
        "other": {"command": "npx", "args": ["-y", "other-server"]},
        "codelex": {"command": "codelex", "args": ["mcp"], "env": {"OLD": "1"}}
    },
    "zzz": [1, 2.5, null, true, "\\u00e9"]
}
"""
OTHER_TOML = """# my codex settings
model = "o3"

[mcp_servers.other]
command = "npx"
args = ["-y", "other-server"]

[mcp_servers.codelex]
command = "codelex"
args = ["mcp"]

[mcp_servers.codelex.env]
OLD = "1"

# the profiles
[profiles.fast]
model = "o4-mini"
"""


def seed(path: Path, client: str) -> str:
    text = OTHER_TOML if path.suffix == ".toml" else OTHER_JSON % client_named(client).container
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o640)
    return text


@linux_only
@pytest.mark.parametrize("client,scope", CASES)
def test_update_keeps_everything_else(client, scope, places, capsys):
    path = where(places, client, scope)
    original = seed(path, client)
    status, out, err = cli(capsys, "install", client, "--scope", scope)
    assert status == 0 and "updated" in out, err
    data = load(path)
    check_entry(client, entry_of(client, data))
    assert entry_of(client, data, "other") == {"command": "npx", "args": ["-y", "other-server"]}
    assert len(data[client_named(client).container]) == 2
    assert path.stat().st_mode & 0o777 == 0o640  # the file's own mode is kept
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        assert data["model"] == "o3" and data["profiles"] == {"fast": {"model": "o4-mini"}}
        # everything outside our table, byte for byte
        head, tail = original.split("[mcp_servers.codelex]\n")[0], original.split('OLD = "1"\n')[1]
        assert text.startswith(head) and text.endswith(tail)
    else:
        assert data["theme"] == "dark" and data["zzz"] == [1, 2.5, None, True, "é"]
        head, tail = original.split('"codelex": ')[0], original.split('"OLD": "1"}}')[1]
        assert text.startswith(head) and text.endswith(tail)
    # uninstall: only ours goes, and what is left is the original less our entry
    status, out, _ = cli(capsys, "uninstall", client, "--scope", scope)
    assert status == 0 and "removed" in out
    data = load(path)
    assert "codelex" not in data[client_named(client).container]
    assert entry_of(client, data, "other") == {"command": "npx", "args": ["-y", "other-server"]}
    assert cli(capsys, "uninstall", client, "--scope", scope)[0] == 1  # nothing left to remove
    left = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        assert left == original.replace('[mcp_servers.codelex]\ncommand = "codelex"\nargs = ["mcp"]\n\n'
                                        '[mcp_servers.codelex.env]\nOLD = "1"\n', "")
    else:
        assert left == original.replace(',\n        "codelex": {"command": "codelex", "args": ["mcp"], '
                                        '"env": {"OLD": "1"}}', "")


@linux_only
def test_added_beside_others_and_roots(places, capsys, tmp_path):
    path = where(places, "cursor", "user")
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {"other": {"command": "x"}}}')
    other = tmp_path / "elsewhere"
    other.mkdir()
    status, out, err = cli(capsys, "install", "cursor", "--root", str(other), "--name", "code-search")
    assert status == 0, err
    assert path.read_text() == ('{"mcpServers": {"other": {"command": "x"}, "code-search": {"command": '
                                f'{json.dumps(COMMAND)}, "args": ["-m", "codelex", "mcp", "--root", '
                                f'{json.dumps(str(other.resolve()))}]}}}}}}')
    assert cli(capsys, "uninstall", "cursor", "--name", "code-search")[0] == 0
    assert path.read_text() == '{"mcpServers": {"other": {"command": "x"}}}'


@linux_only
def test_jsonc_comments_are_kept(places, capsys):
    """Zed's and VS Code's files are JSON with comments: edited in place, the comments stay."""
    path = where(places, "zed", "user")
    path.parent.mkdir(parents=True)
    original = ('// Zed settings\n//\n// see https://zed.dev/docs/configuring-zed\n{\n  "theme": "One Dark", // mine\n'
                '  /* block */ "vim_mode": true,\n}\n')
    path.write_text(original)
    status, out, err = cli(capsys, "install", "zed")
    assert status == 0, err
    text = path.read_text()
    for line in original.splitlines()[:5]:
        assert line in text
    assert '/* block */ "vim_mode": true,' in text
    status, _, _ = cli(capsys, "uninstall", "zed")
    # only our entry goes: the (now empty) object it was added in stays, in the file's trailing-comma style
    assert status == 0 and path.read_text() == original[:-2] + '  "context_servers": {\n  },\n}\n'


@linux_only
@pytest.mark.parametrize("client,bad", [
    ("claude", '{"mcpServers": {}, // a comment\n}'),  # JSONC where JSON is documented
    ("cursor", "{not json"),
    ("cursor", '{"mcpServers": []}'),
    ("windsurf", '["a list"]'),
    ("windsurf", '{"mcpServers": {}, "mcpServers": {}}'),
    ("vscode", '{"servers": {} /* unterminated'),
    ("codex", "[mcp_servers\ncommand = 1"),
    ("codex", 'mcp_servers = "x"\n'),
    ("codex", '[mcp_servers]\ncodelex = { command = "codelex" }\n'),  # inline: edited by hand only
])
def test_a_file_codelex_cannot_edit_is_left_alone(client, bad, places, capsys):
    path = where(places, client, DEFAULT_SCOPE[client])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(bad)
    before = path.stat()
    status, out, err = cli(capsys, "install", client)
    assert status == 2
    assert len(err.splitlines()) == 1 and err.startswith("codelex: ") and str(path) in err, err
    assert COMMAND in out  # the entry to add by hand
    assert path.read_text() == bad and path.stat().st_mtime_ns == before.st_mtime_ns
    assert [p.name for p in path.parent.iterdir() if p.name != path.name and "codelex-tmp" in p.name] == []


@linux_only
@pytest.mark.parametrize("client", [c.name for c in CLIENTS])
def test_print_writes_nothing(client, places, capsys):
    home, _ = places
    before = sorted(home.rglob("*"))
    status, out, err = cli(capsys, "install", client, "--print")
    assert status == 0, err
    assert sorted(home.rglob("*")) == before
    data = tomllib.loads(out) if client == "codex" else json.loads(out)
    check_entry(client, entry_of(client, data))
    assert "nothing written" in err


@linux_only
def test_symlinked_or_odd_files_are_refused(places, capsys, tmp_path):
    home, _ = places
    real = tmp_path / "dotfiles.json"
    real.write_text('{"mcpServers": {}}')
    (home / ".claude.json").symlink_to(real)
    status, out, err = cli(capsys, "install", "claude")
    assert status == 2 and "symbolic link" in err and len(err.splitlines()) == 1
    assert real.read_text() == '{"mcpServers": {}}' and (home / ".claude.json").is_symlink()
    fifo = home / ".cursor" / "mcp.json"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    status, _, err = cli(capsys, "install", "cursor")
    assert status == 2 and "not a regular file" in err


@linux_only
def test_bad_requests(places, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["mcp", "install", "emacs"])
    assert exc.value.code == 2 and "unknown MCP client" in capsys.readouterr().err
    status, _, err = cli(capsys, "install", "windsurf", "--scope", "project")
    assert status == 2 and "no project configuration" in err
    status, _, err = cli(capsys, "install", "claude", "--name", "a.b")
    assert status == 2 and "--name" in err
    status, _, err = cli(capsys, "install", "claude", "--root", str(tmp_path / "missing"))
    assert status == 2 and "not a directory" in err
    status, _, err = cli(capsys, "install", "claude", "--root", str(places[0]))
    assert status == 2 and "home" in err
    os.chdir(places[0])  # the project scope needs a project
    status, _, err = cli(capsys, "install", "claude", "--scope", "project")
    assert status == 2 and "project directory" in err
    assert not (places[0] / ".mcp.json").exists() and not (places[0] / ".claude.json").exists()


def test_plain_mcp_still_parses_as_the_server():
    from codelex.cli_parser import build_parser

    args = build_parser().parse_args(["mcp", "--root", "/x", "--root", "/y"])
    assert args.func == "mcp" and args.root == ["/x", "/y"]
    args = build_parser().parse_args(["mcp", "install", "code", "--root", "/x", "--print"])
    assert args.func == "mcp_install" and args.client.name == "vscode" and args.root == ["/x"] and args.print_only
    args = build_parser().parse_args(["mcp", "uninstall", "claude"])
    assert args.func == "mcp_uninstall" and args.scope is None and args.name == "codelex"
