"""``openagent sessions list | show | fork | delete`` over sessions made by real runs."""

from __future__ import annotations

import json


def _run(openagent, script, prompt, turns, *extra):
    result = openagent("run", "--json", "--model", script(turns), *extra, prompt)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])["session_id"]


def test_list_show_fork_delete(openagent, script):
    empty = openagent("sessions", "list")
    assert empty.returncode == 0 and "No sessions in this directory yet" in empty.stdout

    calls = [[{"thinking": "use the tool"}, {"tool": "Shout", "input": {"text": "hey"}}], "It said **HEY**."]
    first = _run(openagent, script, "Shout hey for me", calls, "--tools", "Shout")
    second = _run(openagent, script, "A second conversation", ["Sure."])
    _run(openagent, script, "and its follow-up", ["Indeed."], "--resume", second)

    listing = openagent("sessions", "list", "--json")
    assert listing.returncode == 0
    rows = [json.loads(line) for line in listing.stdout.splitlines()]
    assert [r["session_id"] for r in rows] == [second, first]  # most recent first
    assert [(r["title"], r["turns"]) for r in rows] == [("A second conversation", 2), ("Shout hey for me", 1)]
    assert all(r["model"].endswith(".json") for r in rows)  # the clitest provider's model name is its script
    table = openagent("sessions", "list").stdout
    assert first in table and "A second conversation" in table and "updated" in table

    shown = openagent("sessions", "show", first[:6])
    assert shown.returncode == 0
    out = shown.stdout
    assert out.index("› Shout hey for me") < out.index("use the tool") < out.index("→ Shout(text='hey')")
    assert out.index("→ Shout(text='hey')") < out.index("← Shout: HEY") < out.index("It said HEY.")

    forked = openagent("sessions", "fork", first)
    assert forked.returncode == 0
    new_id = forked.stdout.strip()
    assert new_id != first
    copy = openagent("sessions", "show", new_id)
    assert "It said HEY." in copy.stdout

    deleted = openagent("sessions", "delete", first)
    assert deleted.returncode == 0 and deleted.stdout.strip() == f"deleted {first}"
    after = openagent("sessions", "list", "--json").stdout
    assert first not in after and new_id in after and second in after


def test_unknown_or_ambiguous_ids_exit_2(openagent, script):
    for command in ("show", "fork", "delete"):
        result = openagent("sessions", command, "nope")
        assert result.returncode == 2
        assert result.stderr.strip() == (
            "openagent: error: no session 'nope' in this directory (openagent sessions list shows them)"
        )
    ids = [_run(openagent, script, f"prompt {i}", ["ok"]) for i in range(2)]
    common = ""
    while ids[0][: len(common) + 1] == ids[1][: len(common) + 1]:
        common = ids[0][: len(common) + 1]
    ambiguous = openagent("sessions", "show", common)
    assert ambiguous.returncode == 2
    assert "ambiguous" in ambiguous.stderr  # the common prefix (maybe empty) names both


def test_a_torn_transcript_still_lists_and_shows(openagent, script):
    session_id = _run(openagent, script, "keep me", ["kept"])
    [path] = list(_data_dir().glob(f"**/{session_id}.jsonl"))
    with path.open("a") as fh:
        fh.write('{"type": "assistant", "message": {"trunc')
    shown = openagent("sessions", "show", session_id)
    assert shown.returncode == 0
    assert "kept" in shown.stdout


def _data_dir():
    import os
    from pathlib import Path

    return Path(os.environ["XDG_DATA_HOME"])
