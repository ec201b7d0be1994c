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
from codelex.mcp_install import CLIENTS, SAFE_PATH, client_named

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

COMMAND = os.path.abspath(sys.executable)
ARGS = [*SAFE_PATH, "-m", "codelex", "mcp"]


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


def check_entry(client: str, entry: dict, args=ARGS, fresh: bool = True) -> None:
    """Our entry, in the shape the client's documentation gives a stdio server (``fresh``: as a new one is)."""
    assert entry["command"] == COMMAND and entry["args"] == args
    if client in ("claude", "vscode"):
        assert entry["type"] == "stdio"
    if client == "zed":
        assert entry["env"] == ({} if fresh else entry["env"])


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
    check_entry(client, entry_of(client, data), fresh=False)
    assert entry_of(client, data, "codelex")["env"] == {"OLD": "1"}  # the user's own key is kept
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
        # (with the blank line that set it apart: one is left between its neighbours)
        assert left == original.replace('[mcp_servers.codelex]\ncommand = "codelex"\nargs = ["mcp"]\n\n'
                                        '[mcp_servers.codelex.env]\nOLD = "1"\n\n', "")
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
                                f'{json.dumps(COMMAND)}, "args": {json.dumps(ARGS)[:-1]}, "--root", '
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
    assert status == 0 and path.read_text() == original[:-2] + '  "context_servers": {},\n}\n'


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
    ("codex", '[mcp_servers]\ncodelex = { command = "codelex", args = ["mcp"] }\n'),  # inline: by hand only
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
    assert args.func == "mcp_uninstall" and args.scope is None and args.name == "codelex" and not args.force
    assert build_parser().parse_args(["mcp", "install", "zed", "--force"]).force


# --- the review's findings ----------------------------------------------------------------------------

USERS_JSON = """{
  "%s": {
    "codelex": {
      "command": "/old/venv/bin/python",
      "args": ["-m", "codelex", "mcp"],
      "env": {"API_KEY": "secret"},
      "disabled": false, // mine
      "startup_timeout_sec": 30
    }
  }
}
"""
USERS_TOML = """[mcp_servers.codelex]
command = "/old/venv/bin/python"
args = [
  "-m", "codelex", "mcp",
]
startup_timeout_sec = 30  # slow disk

[mcp_servers.codelex.env]
API_KEY = "secret"
""".replace('"-m", "codelex", "mcp"', ", ".join(json.dumps(a) for a in ARGS))  # (our args as they stand: kept)


@linux_only
@pytest.mark.parametrize("client,scope", CASES)
def test_update_changes_only_our_keys(client, scope, places, capsys):
    """Finding 1: re-running install keeps the user's env, disabled, timeouts and sub-tables on our entry."""
    path = where(places, client, scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".toml":
        original = USERS_TOML
    else:
        original = USERS_JSON % client_named(client).container
        if not client_named(client).jsonc:
            original = original.replace(" // mine", "")
    path.write_text(original)
    status, out, err = cli(capsys, "install", client, "--scope", scope)
    assert status == 0 and "updated" in out, err
    text = path.read_text()
    data = load(path) if path.suffix == ".toml" else json.loads(text.replace(" // mine", ""))
    entry = entry_of(client, data)
    check_entry(client, entry, fresh=False)
    assert entry["env"] == {"API_KEY": "secret"} and entry["startup_timeout_sec"] == 30
    if path.suffix == ".toml":
        assert set(entry) == {"command", "args", "startup_timeout_sec", "env"}
        assert text.startswith(f'[mcp_servers.codelex]\ncommand = {json.dumps(COMMAND)}\nargs = [\n')
        assert text.endswith('startup_timeout_sec = 30  # slow disk\n\n[mcp_servers.codelex.env]\nAPI_KEY = "secret"\n')
    else:
        assert entry["disabled"] is False
        assert set(entry) - {"type"} == {"command", "args", "env", "disabled", "startup_timeout_sec"}
        assert f'      "args": {json.dumps(ARGS)},\n      "env": {{"API_KEY": "secret"}},\n' in text
        assert '      "disabled": false' in text and f'      "command": {json.dumps(COMMAND)},\n' in text
    before = path.read_bytes()
    status, out, _ = cli(capsys, "install", client, "--scope", scope)
    assert status == 0 and "already up to date" in out and path.read_bytes() == before


GITHUB = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "t0k"}}


@linux_only
@pytest.mark.parametrize("client", ["cursor", "codex"])
def test_an_entry_not_ours_needs_force(client, places, capsys):
    """Finding 2: --name github neither replaces nor removes the user's GitHub server without --force."""
    path = where(places, client, "user")
    path.parent.mkdir(parents=True)
    if client == "codex":
        original = ('[mcp_servers.github]\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-github"]\n\n'
                    '[mcp_servers.github.env]\nGITHUB_TOKEN = "t0k"\n')
    else:
        original = json.dumps({"mcpServers": {"github": GITHUB}}, indent=2) + "\n"
    path.write_text(original)
    for argv in (["install", client, "--name", "github"], ["install", client, "--name", "github", "--print"],
                 ["uninstall", client, "--name", "github"]):
        status, out, err = cli(capsys, *argv)
        assert status == 2 and len(err.splitlines()) == 1 and "--force" in err and "not codelex's" in err, err
        assert path.read_text() == original
    status, out, err = cli(capsys, "install", client, "--name", "github", "--force")
    assert status == 0, err
    # replaced whole: the other server's token is not handed to codelex
    assert entry_of(client, load(path), "github") == {"command": COMMAND, "args": ARGS}
    assert cli(capsys, "uninstall", client, "--name", "github")[0] == 0  # ours now
    path.write_text(original)
    assert cli(capsys, "uninstall", client, "--name", "github", "--force")[0] == 0
    assert "github" not in load(path).get("mcp_servers", load(path).get("mcpServers", {}))


@linux_only
@pytest.mark.parametrize("entry", [
    {"command": "codelex", "args": ["mcp", "--root", "/x"]},
    {"command": "/opt/bin/codelex", "args": ["mcp"], "env": {"K": "v"}},
    {"command": "/other/venv/bin/python3", "args": ["-m", "codelex", "mcp"]},
    {"command": "uv", "args": ["run", "python", "-m", "codelex", "mcp"]},
])
def test_entries_recognised_as_ours(entry, places, capsys):
    path = where(places, "cursor", "user")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"codelex": entry}}))
    status, out, err = cli(capsys, "install", "cursor")
    assert status == 0 and "updated" in out, err
    assert cli(capsys, "uninstall", "cursor")[0] == 0


@linux_only
@pytest.mark.parametrize("client,folder,target", [("zed", ".zed", ".config/zed"), ("vscode", ".vscode", "outside")])
def test_project_scope_refuses_a_symlinked_directory(client, folder, target, places, capsys):
    """Finding 3: a project's .zed or .vscode that is a link leads out of the project: nothing is written."""
    home, project = places
    (home / target).mkdir(parents=True)
    settings = home / ".config" / "zed" / "settings.json"
    if client == "zed":
        settings.write_text('{"theme": "One Dark"}\n')
    (project / folder).symlink_to(home / target)
    for action in ("install", "uninstall"):
        status, out, err = cli(capsys, action, client, "--scope", "project")
        assert status == 2 and "symbolic link" in err and len(err.splitlines()) == 1, err
    if client == "zed":
        assert settings.read_text() == '{"theme": "One Dark"}\n'
    else:
        assert list((home / target).iterdir()) == []


# Files that one install and one uninstall must give back byte for byte (findings 4, 5 and 8).
CYCLES = [
    pytest.param("cursor", '{\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n', id="json"),
    pytest.param("cursor", '{\r\n  "mcpServers": {\r\n    "other": {"command": "x"}\r\n  }\r\n}\r\n', id="json-crlf"),
    pytest.param("cursor", '{\n  "theme": "dark",\n  "mcpServers": {}\n}\n', id="json-empty"),
    pytest.param("cursor", '{\r\n    "mcpServers": {}\r\n}', id="json-empty-crlf"),
    pytest.param("cursor", '{"mcpServers": {}}', id="json-one-line-empty"),
    pytest.param("codex", 'model = "o3"\n', id="toml"),
    pytest.param("codex", 'model = "o3"\r\n\r\n[mcp_servers.other]\r\ncommand = "x"\r\n', id="toml-crlf"),
    pytest.param("codex", '# settings\n\n[profiles.fast]\nmodel = "o4-mini"\n\n# end\n', id="toml-comment-last"),
]


@linux_only
@pytest.mark.parametrize("client,original", CYCLES)
def test_install_then_uninstall_gives_the_file_back(client, original, places, capsys):
    path = where(places, client, "user")
    path.parent.mkdir(parents=True)
    path.write_bytes(original.encode())
    for _ in range(2):
        assert cli(capsys, "install", client)[0] == 0
        text = path.read_bytes().decode()
        check_entry(client, entry_of(client, load(path)))
        if "\r\n" in original:  # the file's own line ending, everywhere
            assert text.count("\n") == text.count("\r\n")
        assert cli(capsys, "uninstall", client)[0] == 0
        assert path.read_bytes().decode() == original


@linux_only
def test_an_empty_container_is_filled_at_its_indentation(places, capsys):
    """Finding 8: our entry inside a pretty-printed empty "mcpServers": {} is indented as its neighbours."""
    path = where(places, "claude", "user")
    path.write_text('{\n  "numStartups": 3,\n  "mcpServers": {}\n}\n')
    assert cli(capsys, "install", "claude")[0] == 0
    data = load(path)
    assert path.read_text() == json.dumps(data, indent=2) + "\n"


@linux_only
def test_codex_headers_are_the_real_ones(places, capsys):
    """Finding 6: a BOM before our header, and a header's text inside a multi-line string."""
    path = where(places, "codex", "user")
    path.parent.mkdir(parents=True)
    path.write_text('\ufeff[mcp_servers.codelex]\ncommand = "codelex"\nargs = ["mcp"]\n\n[profiles.x]\nmodel = "o3"\n')
    status, out, err = cli(capsys, "install", "codex")
    assert status == 0 and "updated" in out, err
    assert path.read_text().startswith("\ufeff[mcp_servers.codelex]\n")
    check_entry("codex", entry_of("codex", tomllib.loads(path.read_text().lstrip("\ufeff"))))
    assert cli(capsys, "uninstall", "codex")[0] == 0
    assert path.read_text() == '\ufeff[profiles.x]\nmodel = "o3"\n'
    original = 'notes = """\n[mcp_servers.codelex]\ncommand = "x"\n"""\n'
    path.write_text(original)
    status, out, err = cli(capsys, "install", "codex")
    assert status == 0 and "added" in out, err
    assert load(path)["notes"] == '[mcp_servers.codelex]\ncommand = "x"\n'
    assert cli(capsys, "uninstall", "codex")[0] == 0 and path.read_text() == original


@linux_only
def test_a_root_whose_name_is_not_utf8_is_refused_first(places, capsys, tmp_path):
    """Finding 7: refused before anything is written, --print included."""
    home, _ = places
    raw = os.fsencode(str(tmp_path)) + b"/caf\xe9"
    os.mkdir(raw)
    for extra in ((), ("--print",)):
        status, out, err = cli(capsys, "install", "cursor", "--root", os.fsdecode(raw), *extra)
        assert status == 2 and "UTF-8" in err and len(err.splitlines()) == 1 and out == "", err
        assert not (home / ".cursor").exists()


@linux_only
def test_a_json_error_reads_well(places, capsys):
    path = where(places, "cursor", "user")
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {"a": "\x01"}}')
    status, _, err = cli(capsys, "install", "cursor")
    assert status == 2 and "control character at line 1" in err, err


def test_the_server_flags_given_before_install_are_registered(tmp_path, monkeypatch, capsys):
    from codelex import cli

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / ".codex"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["mcp", "--output-schemas", "install", "cursor", "--print"]) == 0
    assert '"--output-schemas"' in capsys.readouterr().out


def test_the_registered_command_never_imports_the_checkout_it_is_started_in(tmp_path):
    """A client starts the server in a project's directory, and `python -m` puts that directory first on
    sys.path: a checkout's own codelex/ would run instead of this installation's (found with a plain install,
    where site-packages comes after it)."""
    import subprocess

    from codelex.mcp_install import server_command

    command, args = server_command()
    assert args[:4] == [*SAFE_PATH, "-m", "codelex", "mcp"]
    hostile = tmp_path / "checkout"
    (hostile / "probe_checkout_module").mkdir(parents=True)
    marker = tmp_path / "ran"
    (hostile / "probe_checkout_module/__main__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    plain = subprocess.run([command, "-m", "probe_checkout_module"], cwd=hostile, capture_output=True, timeout=60)
    assert plain.returncode == 0 and marker.exists()  # (what a bare -m does: the check below can fail)
    marker.unlink()
    safe = subprocess.run([command, *args[:2], "probe_checkout_module"], cwd=hostile, capture_output=True,
                          text=True, timeout=60)
    assert not marker.exists() and safe.returncode != 0 and "No module named" in safe.stderr
