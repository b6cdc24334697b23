"""A stop request is seen at once, even while the main thread waits inside C++ (run in child
processes: the wakeup descriptor and the watcher are per process)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SEEN_AT_ONCE = textwrap.dedent(
    """
    import os, signal
    from fusiondiff import termination
    signal.signal(signal.SIGTERM, lambda *args: None)  # a Python handler, as the command line has
    assert termination.watch() and termination.watch()
    os.kill(os.getpid(), signal.SIGTERM)
    print("requested", termination.requested.wait(5))
    """
)

# The main thread waits in C++ (a torch future, as it waits in the autograd engine during a
# backward) while another thread sends SIGTERM: the Python handler cannot run until the wait ends,
# the watcher sees the request before that.
SEEN_WHILE_BLOCKED = textwrap.dedent(
    """
    import os, signal, threading, time
    import torch
    from fusiondiff import termination
    order = []
    signal.signal(signal.SIGTERM, lambda *args: order.append("handler"))
    termination.watch()
    future = torch.futures.Future()

    def stop_then_release():
        time.sleep(0.5)  # the main thread is in future.wait() by then
        os.kill(os.getpid(), signal.SIGTERM)
        order.append(f"requested {termination.requested.wait(5)}")
        future.set_result(None)

    threading.Thread(target=stop_then_release).start()
    future.wait()
    print(order)
    """
)


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_sigterm_sets_the_stop_request():
    assert _run(SEEN_AT_ONCE) == "requested True"


def test_stop_request_is_seen_before_the_main_thread_can_run_its_handler():
    pytest.importorskip("torch")
    assert _run(SEEN_WHILE_BLOCKED) == "['requested True', 'handler']"
