"""``openagent run``: streaming, JSON lines, exit codes, stdin, permissions, resume, settings."""

from __future__ import annotations

import json
import subprocess

from cli_support import OPENAGENT

THINK_AND_CALL = [
    [{"thinking": "I should shout"}, {"text": "Let me shout."}, {"tool": "Shout", "input": {"text": "hi"}}],
    "Done: HI",
]


def test_answer_streams_to_stdout_and_tool_events_go_to_stderr(openagent, script):
    result = openagent("run", "--model", script(THINK_AND_CALL, chunk_size=3), "--tools", "Shout", "go")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Let me shout.\nDone: HI\n"
    assert result.stderr.splitlines() == ["→ Shout(text='hi')", "← Shout: HI"]


def test_text_reaches_stdout_before_the_run_ends(project, cli_env, script):
    model = script(["Hello, this answer arrives one character at a time."], chunk_size=1, delay=0.05)
    with subprocess.Popen(
        [OPENAGENT, "run", "--model", model, "x"], cwd=project, env=cli_env, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        first = proc.stdout.read(5)
        still_running = proc.poll() is None
        rest = proc.stdout.read()
    assert first == "Hello"
    assert still_running  # the first characters arrived while the model was still streaming
    assert first + rest == "Hello, this answer arrives one character at a time.\n"
    assert proc.returncode == 0


def test_json_prints_every_message_as_one_line(openagent, script):
    result = openagent("run", "--json", "--model", script(THINK_AND_CALL), "--tools", "Shout", "go")
    assert result.returncode == 0, result.stderr
    messages = [json.loads(line) for line in result.stdout.splitlines()]
    assert [m["type"] for m in messages] == ["system", "assistant", "user", "assistant", "result"]
    assert messages[1]["content"][0] == {"type": "thinking", "thinking": "I should shout", "signature": ""}
    assert messages[2]["content"][0]["content"] == "HI"
    assert messages[-1]["subtype"] == "success" and messages[-1]["result"] == "Done: HI"
    assert result.stderr == ""


def test_json_with_partial_messages_includes_the_deltas(openagent, script):
    result = openagent(
        "run", "--json", "--include-partial-messages", "--model", script(["abcdef"], chunk_size=2), "x"
    )
    events = [json.loads(line) for line in result.stdout.splitlines()]
    deltas = [
        e["event"]["delta"]["text"]
        for e in events
        if e["type"] == "stream_event" and e["event"]["type"] == "content_block_delta"
    ]
    assert deltas == ["ab", "cd", "ef"]


def test_prompt_from_stdin(openagent):
    result = openagent("run", "--model", "test:echo", "-", input="echo me\nplease")
    assert result.returncode == 0
    assert result.stdout == "echo me\nplease\n"


def test_model_failure_exits_1_with_one_line(openagent, script):
    result = openagent("run", "--model", script([{"error": "the model fell over"}]), "go")
    assert result.returncode == 1
    assert result.stderr.splitlines() == ["openagent: error: ProviderError: clitest: the model fell over"]


def test_failure_after_partial_output_keeps_the_output(openagent, script):
    turns = [[{"text": "half an answer"}, {"error": "connection lost"}]]
    result = openagent("run", "--model", script(turns), "go")
    assert result.returncode == 1
    assert result.stdout == "half an answer\n"
    assert result.stderr.strip().endswith("connection lost")


def test_max_turns_exits_1(openagent, script):
    result = openagent("run", "--model", script(THINK_AND_CALL), "--tools", "Shout", "--max-turns", "1", "go")
    assert result.returncode == 1
    assert (
        result.stderr.splitlines()[-1]
        == "openagent: error: stopped after reaching the turn limit (--max-turns)"
    )


def test_tool_failure_is_reported_and_a_run_that_ends_in_error_exits_1(openagent, script):
    turns = [[{"tool": "Shout", "input": {"wrong": 1}}], [{"error": "gave up"}]]
    result = openagent("run", "--model", script(turns), "--tools", "Shout", "go")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "→ Shout(wrong=1)"
    assert lines[1].startswith("✗ Shout: Invalid arguments for tool Shout")
    assert lines[2] == "openagent: error: ProviderError: clitest: gave up"


def test_garbled_tool_call_is_shown_with_its_raw_text(openagent, script):
    turns = [[{"tool": "Shout", "input": "{not json"}], "sorry"]
    result = openagent("run", "--model", script(turns), "--tools", "Shout", "go")
    assert result.returncode == 0
    assert "✗ Shout: garbled call '{not json': the arguments are not valid JSON" in result.stderr


def test_tool_needing_permission_is_denied_unless_allowed(openagent, script):
    turns = [[{"tool": "Danger", "input": {"action": "rm"}}], "ok"]
    denied = openagent("run", "--model", script(turns), "--tools", "Danger", "go")
    assert denied.returncode == 0
    assert "✗ Danger: Danger needs permission" in denied.stderr
    allowed = openagent("run", "--model", script(turns), "--tools", "Danger", "--allow", "Danger(rm)", "go")
    assert "← Danger: did rm" in allowed.stderr
    other = openagent("run", "--model", script(turns), "--tools", "Danger", "--allow", "Danger(ls)", "go")
    assert "✗ Danger" in other.stderr
    bypass = openagent(
        "run", "--model", script(turns), "--tools", "Danger", "--permission-mode", "bypassPermissions", "go"
    )
    assert "← Danger: did rm" in bypass.stderr


def test_system_prompt_base_url_and_output_schema_reach_the_model(
    openagent, script, project, record, requests_seen
):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    (project / "schema.json").write_text(json.dumps(schema))
    model = script(['{"n": 5}'], record=str(record))
    result = openagent(
        "run",
        "--json",
        "--model",
        model,
        "--system",
        "Be brief.",
        "--base-url",
        "http://127.0.0.1:1/v1",
        "--output-schema",
        "schema.json",
        "five",
    )
    assert result.returncode == 0, result.stderr
    [seen] = requests_seen(record)
    assert seen["system"] == "Be brief."
    assert seen["base_url"] == "http://127.0.0.1:1/v1"
    assert seen["output_format"]["type"] == "json_schema" and seen["output_format"]["schema"] == schema
    assert json.loads(result.stdout.splitlines()[-1])["structured_output"] == {"n": 5}


def test_resume_and_continue_send_the_earlier_conversation(openagent, script, record, requests_seen):
    first = openagent("run", "--json", "--model", script(["I am Scripty."]), "Who are you?")
    session_id = json.loads(first.stdout.splitlines()[-1])["session_id"]
    openagent("run", "--model", script(["unrelated"]), "another session")

    resumed = openagent(
        "run",
        "--json",
        "--model",
        script(["You asked who I am."], record=str(record)),
        "--resume",
        session_id[:8],
        "What did I ask?",
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["session_id"] == session_id
    texts = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for m in requests_seen(record)[0]["messages"]
    ]
    assert texts == ["Who are you?", "I am Scripty.", "What did I ask?"]

    record.unlink()
    continued = openagent("run", "--model", script(["yes"], record=str(record)), "--continue", "And then?")
    assert continued.returncode == 0
    assert [m["content"] for m in requests_seen(record)[0]["messages"]][-1] == "And then?"
    assert len(requests_seen(record)[0]["messages"]) == 5  # the resumed session was the most recent one


def test_bad_usage_exits_2(openagent, script, project):
    (project / "bad.json").write_text("{not json")
    cases = {
        "no model": ["run", "hello"],
        "unknown provider": ["run", "--model", "nope:x", "hello"],
        "malformed model": ["run", "--model", "nocolon", "hello"],
        "unknown tool": ["run", "--model", "test:echo", "--tools", "Nope", "hello"],
        "bad permission mode": ["run", "--model", "test:echo", "--permission-mode", "yolo", "hello"],
        "bad max turns": ["run", "--model", "test:echo", "--max-turns", "0", "hello"],
        "unknown session": ["run", "--model", "test:echo", "--resume", "does-not-exist", "hello"],
        "bad schema": ["run", "--model", "test:echo", "--output-schema", "bad.json", "hello"],
        "missing schema": ["run", "--model", "test:echo", "--output-schema", "missing.json", "hello"],
        "empty prompt": ["run", "--model", "test:echo", "-"],
        "unknown option": ["run", "--modle", "test:echo", "hello"],
    }
    for case, args in cases.items():
        result = openagent(*args)
        assert result.returncode == 2, (case, result.stdout, result.stderr)
        assert result.stdout == "", case
        assert "Traceback" not in result.stderr, case


def test_unknown_tool_names_the_installed_ones(openagent):
    result = openagent("run", "--model", "test:echo", "--tools", "Nope", "hello")
    assert "unknown tool 'Nope'" in result.stderr
    assert "Danger" in result.stderr and "Shout" in result.stderr


def test_bash_prints_a_host_execution_warning(openagent):
    result = openagent("run", "--model", "test:echo", "--tools", "Bash", "hello")
    assert "warning: Bash is enabled" in result.stderr
    assert "no sandbox" in result.stderr
    quiet = openagent("run", "--model", "test:echo", "hello")
    assert "warning" not in quiet.stderr


def test_sandbox_flag_and_setting(openagent):
    tools = {"OPENAGENT_PLUGINS": "clitest,tools"}
    result = openagent(
        "run", "--model", "test:echo", "--tools", "Bash", "--sandbox", "--json", "hello", env=tools
    )
    assert result.returncode == 0 and "in a bubblewrap sandbox" in result.stderr
    assert '"sandbox": {"enabled": true' in result.stdout.splitlines()[0]
    bad = openagent(
        "run", "--model", "test:echo", "--tools", "Bash", "hello", env={"OPENAGENT_SANDBOX": "maybe"}
    )
    assert bad.returncode == 2 and "sandbox must be true, false or a table" in bad.stderr


def test_a_reader_that_goes_away_ends_the_run_quietly(project, cli_env, script):
    model = script(["line\n" * 2000], chunk_size=5)
    with subprocess.Popen(
        [OPENAGENT, "run", "--model", model, "x"],
        cwd=project,
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.read(5) == "line\n"
        proc.stdout.close()  # like `openagent run … | head -1`
        errors = proc.stderr.read()
    assert proc.returncode == 1
    assert errors == ""


def test_max_tokens_reaches_the_model_request(openagent, script, record, requests_seen):
    result = openagent("run", "--model", script(["ok"], record=str(record)), "--max-tokens", "7", "hi")
    assert result.returncode == 0, result.stderr
    assert requests_seen(record)[0]["max_tokens"] == 7
    assert openagent("run", "--model", "test:echo", "--max-tokens", "0", "hi").returncode == 2
