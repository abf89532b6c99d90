"""``openagent chat`` driven through a pseudo-terminal, as a person would: typing, approving, Ctrl-C."""

from __future__ import annotations

import re

import pytest
from cli_support import Terminal


@pytest.fixture
def chat(project, cli_env):
    terminals: list[Terminal] = []

    def start(*args: str) -> Terminal:
        terminal = Terminal(["chat", *args], project, cli_env)
        terminals.append(terminal)
        return terminal

    yield start
    for terminal in terminals:
        terminal.child.close(force=True)


DANGER = [{"text": "Let me **check**."}, {"tool": "Danger", "input": {"action": "rm"}}]


def test_streams_the_answer_and_asks_before_each_tool_call(chat, script):
    model = script(
        [[{"thinking": "hmm, a tool"}, *DANGER], "First *done*.", DANGER, "Second done."], chunk_size=4
    )
    term = chat("--model", model, "--tools", "Danger")
    term.prompt()
    term.type("do it")
    term.expect("hmm, a tool")
    term.expect("Let me check.")  # rendered markdown: no asterisks
    term.expect("→ Danger(action='rm')")
    term.expect("Allow? [y] once")
    term.type("y")
    term.expect("← Danger: did rm")
    term.expect("First done.")
    term.prompt()
    term.type("again")
    term.expect("Allow? [y] once")  # "once" really was once
    term.type("y")
    term.expect("Second done.")
    term.prompt()
    term.type("/exit")
    assert term.finish() == 0
    assert "**" not in term.text


def test_always_allows_the_tool_for_the_rest_of_the_chat(chat, script):
    model = script([DANGER, "first", DANGER, "second"])
    term = chat("--model", model, "--tools", "Danger")
    term.prompt()
    term.type("do it")
    term.expect("Allow?")
    term.type("a")
    term.expect("first")
    term.prompt()
    term.type("again")
    term.expect("← Danger: did rm")
    term.expect("second")
    term.prompt()
    term.type("/exit")
    assert term.finish() == 0
    assert term.text.count("permission Danger(") == 1  # asked once (the prompt line itself is redrawn)


def test_deny_tells_the_model(chat, script, record, requests_seen):
    model = script([DANGER, "understood"], record=str(record))
    term = chat("--model", model, "--tools", "Danger")
    term.prompt()
    term.type("do it")
    term.expect("Allow?")
    term.type("maybe")
    term.expect("answer y, a or n")
    term.type("n")
    term.expect("✗ Danger: the user denied this Danger call")
    term.expect("understood")
    term.prompt()
    term.child.sendeof()
    assert term.finish() == 0
    result = requests_seen(record)[1]["messages"][-1]["content"][0]
    assert result["is_error"] is True and result["content"] == "the user denied this Danger call"


def test_ctrl_c_interrupts_the_turn_not_the_program(chat, script):
    slow = "This answer is streamed very slowly so that there is time to interrupt it. " * 3
    model = script([slow, "Still here."], chunk_size=2, delay=0.05)
    term = chat("--model", model)
    term.prompt()
    term.type("talk slowly")
    term.expect("This answer")
    term.child.sendintr()
    term.expect("(interrupted)")
    term.prompt()
    term.child.sendintr()  # at the prompt: clears the line, does not leave
    term.type("are you there?")
    term.expect("Still here.")
    term.prompt()
    term.type("/exit")
    assert term.finish() == 0
    assert slow.strip() not in term.text  # the rest of the slow answer never came


def test_session_persists_and_continue_picks_it_up(chat, script, record, requests_seen):
    term = chat("--model", script(["Nice to meet you, Ada."]))
    term.prompt()
    term.type("My name is Ada.")
    term.expect("Nice to meet you")
    term.prompt()
    term.type("/exit")
    term.expect("saved: openagent chat --resume ")
    assert term.finish() == 0
    session_id = re.search(r"--resume (\S+)", term.text).group(1)

    again = chat("--model", script(["You are Ada."], record=str(record)), "--continue")
    again.expect(f"session {session_id} (resumed, 1 earlier prompts)")
    again.prompt()
    again.type("What is my name?")
    again.expect("You are Ada.")
    again.prompt()
    again.type("/exit")
    assert again.finish() == 0
    contents = [m["content"] for m in requests_seen(record)[0]["messages"]]
    assert contents[0] == "My name is Ada." and contents[-1] == "What is my name?"


def test_slash_commands(chat, script, openagent):
    earlier = openagent("run", "--model", "test:echo", "an earlier session")
    assert earlier.returncode == 0
    term = chat("--model", script(["scripted answer"]))
    term.prompt()
    term.type("/help")
    term.expect("/resume [ID]")
    term.prompt()
    term.type("/model")
    term.expect("model: clitest:")
    term.prompt()
    term.type("/model nope:x")
    term.expect("error: unknown provider 'nope'")
    term.prompt()
    term.type("/model test:echo")
    term.expect("model: test:echo")
    term.prompt()
    term.type("echo this")
    term.expect("echo this")
    term.prompt()
    term.type("/cost")
    term.expect("tokens: ")
    term.prompt()
    term.type("/resume")
    term.expect("an earlier session")
    term.prompt()
    term.type("/resume nonexistent")
    term.expect("error: no session 'nonexistent'")
    term.prompt()
    term.type("/clear")
    term.expect("(new)")
    term.prompt()
    term.type("/bogus")
    term.expect("unknown command /bogus")
    term.prompt()
    term.child.sendeof()
    assert term.finish() == 0


def test_ctrl_c_at_the_approval_question_denies_and_ends_the_turn(chat, script, record, requests_seen):
    model = script([DANGER, "after the interrupt"], record=str(record))
    term = chat("--model", model, "--tools", "Danger")
    term.prompt()
    term.type("do it")
    term.expect("Allow?")
    term.child.sendintr()
    term.expect("✗ Danger: the user interrupted instead of answering")
    term.prompt()
    term.type("go on")
    term.expect("after the interrupt")
    term.prompt()
    term.type("/exit")
    assert term.finish() == 0
    assert "did rm" not in term.text


def test_chat_reads_lines_from_a_pipe_too(openagent, script):
    turns = [DANGER, "denied, fine", "second answer"]
    result = openagent("chat", "--model", script(turns), "--tools", "Danger", input="do it\nn\nnext\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("→ Danger(action='rm')") < out.index("✗ Danger: the user denied this Danger call")
    assert (
        out.index("denied, fine") < out.index("second answer") < out.index("saved: openagent chat --resume")
    )


def test_chat_without_a_model_exits_2(openagent):
    result = openagent("chat", input="hello\n")
    assert result.returncode == 2
    assert result.stderr.startswith("openagent: error: no model")


def test_ask_user_question_is_answered_at_the_terminal(chat, script, record, requests_seen):
    pytest.importorskip("openagent_tools", reason="AskUserQuestion comes from openagent-tools")
    questions = [
        {
            "question": "Which database?",
            "header": "DB",
            "options": [{"label": "SQLite", "description": "a file"}, {"label": "PostgreSQL"}],
        },
        {
            "question": "Which extras?",
            "options": [{"label": "tests"}, {"label": "docs"}, {"label": "bench"}],
            "multiSelect": True,
        },
    ]
    turns = [[{"tool": "AskUserQuestion", "input": {"questions": questions}}], "Noted."]
    term = chat("--model", script(turns, record=str(record)), "--tools", "AskUserQuestion")
    term.prompt()
    term.type("set it up")
    term.expect("? Which database?")
    term.expect("1. SQLite — a file")
    term.expect("answer ›")
    term.type("2")
    term.expect("? Which extras?")
    term.expect("answer ›")
    term.type("1,3")
    term.expect("Noted.")
    term.prompt()
    term.type("/exit")
    assert term.finish() == 0
    answer = requests_seen(record)[1]["messages"][-1]["content"][0]["content"]
    assert answer == "The user answered:\nWhich database? → PostgreSQL\nWhich extras? → tests, bench"
