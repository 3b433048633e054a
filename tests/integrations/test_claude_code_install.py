"""``branchmem claude-code install``: merges its hooks and MCP server into the
settings, keeps everything else, changes nothing the second time, and
``--uninstall`` gives back the files as they were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from branchmem.cli import main as cli
from branchmem.errors import InvalidInput
from branchmem.integrations.codingagents.install import (
    HOOK_EVENTS,
    install,
    with_codex_server,
    with_hooks,
)

THEIRS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
        ],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}],
    },
    "env": {"A": "1"},
}
SERVERS = {"mcpServers": {"other": {"command": "other-mcp", "args": []}}}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4))
    return path


def run(*args: str) -> int:
    return cli(["claude-code", "install", *args])


def test_project_install_and_uninstall_round_trip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = write(tmp_path / ".claude" / "settings.local.json", THEIRS)
    mcp = write(tmp_path / ".mcp.json", SERVERS)
    assert run("--project-dir", str(tmp_path), "--namespace", "web") == 0
    data = json.loads(settings.read_text())
    assert data["permissions"] == THEIRS["permissions"] and data["env"] == THEIRS["env"]
    assert data["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    for event in HOOK_EVENTS:
        ours = [
            h["command"]
            for g in data["hooks"][event]
            for h in g["hooks"]
            if "claude-code hook" in h["command"]
        ]
        assert len(ours) == 1 and ours[0].endswith("claude-code hook --namespace web")
    assert data["hooks"]["UserPromptSubmit"][0] == THEIRS["hooks"]["UserPromptSubmit"][0]
    server = json.loads(mcp.read_text())["mcpServers"]
    assert server["other"] == SERVERS["mcpServers"]["other"]
    assert server["branchmem"]["args"][-4:] == ["claude-code", "mcp", "--namespace", "web"]
    before = settings.read_text(), mcp.read_text()
    capsys.readouterr()
    assert run("--project-dir", str(tmp_path), "--namespace", "web") == 0
    assert (settings.read_text(), mcp.read_text()) == before
    assert "nothing to change" in capsys.readouterr().out
    assert run("--project-dir", str(tmp_path), "--uninstall") == 0
    assert json.loads(settings.read_text()) == THEIRS
    assert json.loads(mcp.read_text()) == SERVERS


def test_user_install_keeps_the_rest_of_the_state_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    state = write(tmp_path / ".claude.json", {"numStartups": 3, "projects": {"/x": {}}})
    assert run("--user") == 0
    assert json.loads(state.read_text())["numStartups"] == 3
    assert "branchmem" in json.loads(state.read_text())["mcpServers"]
    hooks = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    assert sorted(hooks) == sorted(HOOK_EVENTS)
    assert run("--user", "--uninstall") == 0
    assert json.loads(state.read_text()) == {"numStartups": 3, "projects": {"/x": {}}}
    assert not (tmp_path / ".claude" / "settings.json").exists()  # it was ours alone


def test_codex_config_round_trips_as_text(tmp_path: Path) -> None:
    config = tmp_path / "codex" / "config.toml"
    config.parent.mkdir()
    text = 'model = "m"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    config.write_text(text)
    kwargs: dict[str, Any] = {"scope": "user", "project": tmp_path, "home": tmp_path}
    kwargs |= {"db": "/d/agents.db", "namespace": None, "codex": True, "codex_home": config.parent}
    assert any("Codex" in line for line in install(**kwargs))
    new = config.read_text()
    assert new.startswith(text) and "[mcp_servers.branchmem]" in new
    assert '"--db", "/d/agents.db"' in new
    assert not any("Codex" in line for line in install(**kwargs))  # the same again
    install(**kwargs, uninstall=True)
    assert config.read_text() == text


def test_a_server_of_the_same_name_outside_the_block_is_left_alone() -> None:
    with pytest.raises(InvalidInput, match=r"already defined outside branchmem's block"):
        with_codex_server('[mcp_servers.branchmem]\ncommand = "x"\n', ["python"])


def test_settings_that_are_not_json_are_refused_and_left_unchanged(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text("{not json")
    with pytest.raises(InvalidInput, match="is not JSON"):
        install(scope="project", project=tmp_path, home=tmp_path, db=None, namespace=None)
    assert settings.read_text() == "{not json"


def test_hooks_that_are_not_an_object_are_refused() -> None:
    with pytest.raises(InvalidInput, match="'hooks' is not a JSON object"):
        with_hooks({"hooks": []}, "branchmem claude-code hook")


def test_a_model_endpoint_goes_into_the_hook_command(tmp_path: Path) -> None:
    args = ["--project-dir", str(tmp_path), "--llm-base-url", "http://h:8000/v1"]
    assert run(*args) == 1  # without --llm-model
    assert not (tmp_path / ".claude").exists()
    assert run(*args, "--llm-model", "m") == 0
    hooks = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())["hooks"]
    command = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command.endswith("--llm-base-url http://h:8000/v1 --llm-model m")


def test_a_project_install_names_the_project_namespace(tmp_path: Path) -> None:
    from branchmem.integrations.codingagents.paths import project_namespace

    assert run("--project-dir", str(tmp_path)) == 0
    ns = project_namespace(tmp_path.resolve())
    server = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["branchmem"]
    assert server["args"][-2:] == ["--namespace", ns]
