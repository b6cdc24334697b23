"""The record-reading commands run with numpy's BLAS held to one thread, and leave the environment as it was."""

from __future__ import annotations

import os

import pytest

from fusiondiff.front import blas, cli


def test_a_reading_command_holds_blas_to_one_thread_and_puts_the_environment_back(monkeypatch):
    for name in blas.CHOSEN:
        monkeypatch.delenv(name, raising=False)
    seen = {}

    def handler(args):
        seen[args.command] = os.environ.get("OPENBLAS_NUM_THREADS")
        return 0

    for command in ("diff", "show", "capture", "replay"):
        monkeypatch.setitem(cli._HANDLERS, command, handler)
    cli.main(["diff", "a.json", "b.json"])
    cli.main(["show", "a.json"])
    assert seen == {"diff": "1", "show": "1"}
    assert "OPENBLAS_NUM_THREADS" not in os.environ


@pytest.mark.parametrize("command", ["capture", "replay", "roundtrip", "demo", None])
def test_a_command_that_may_run_the_users_program_is_left_alone(monkeypatch, command):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    with blas.one_blas_thread(command):
        assert "OPENBLAS_NUM_THREADS" not in os.environ


@pytest.mark.parametrize("name", blas.CHOSEN)
def test_a_thread_count_the_user_chose_is_kept(monkeypatch, name):
    for other in blas.CHOSEN:
        monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(name, "4")
    with blas.one_blas_thread("diff"):
        assert os.environ[name] == "4"
        assert name == "OPENBLAS_NUM_THREADS" or "OPENBLAS_NUM_THREADS" not in os.environ
    assert os.environ[name] == "4"


def test_the_variable_is_removed_when_the_command_fails(monkeypatch):
    for name in blas.CHOSEN:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(RuntimeError), blas.one_blas_thread("report"):
        raise RuntimeError
    assert "OPENBLAS_NUM_THREADS" not in os.environ
