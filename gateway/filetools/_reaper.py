"""A tool script's parent on Linux: nothing the script starts outlives it.

    python -I -S _reaper.py GATEWAY_PID STATUS_FD SCRIPT

This process makes itself a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`) and starts SCRIPT.
A descendant whose parent exits is then re-parented to this process, not to init, even one that
left the process group or the session (`setsid`, a double fork), so every descendant can be
found in /proc by its parent chain. When the script exits, or SIGTERM arrives (the gateway's
timeout, an output flood, a cancelled call, or the gateway's own death through
`PR_SET_PDEATHSIG`), every descendant is killed and reaped; then this process ends as the script
did: the same exit status, or the same signal.

A script that could not be started (missing, not executable, no interpreter) is reported on
STATUS_FD as its errno, in decimal. Standard library only, run without `site`: it starts quickly.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
# Python ignores these; a script must start with the defaults, as subprocess would give it.
_RESET = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, signal.SIGINT)


class _Stop(Exception):
    """SIGTERM: end the script and everything it started."""


def _stop(signum: int, frame: object) -> None:
    raise _Stop


def main(argv: list[str]) -> None:
    gateway_pid, status_fd, script = int(argv[1]), int(argv[2]), argv[3]
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # until the handler is in place
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    os.set_inheritable(status_fd, False)
    status: int | None = None
    if os.getppid() != gateway_pid:  # the gateway died before PR_SET_PDEATHSIG took effect
        os._exit(1)
    try:
        pid = os.posix_spawn(script, [script], os.environ, setsigmask=(), setsigdef=_RESET)
    except OSError as exc:
        os.write(status_fd, str(exc.errno or 0).encode())
        os._exit(127)
    os.close(status_fd)
    signal.signal(signal.SIGTERM, _stop)
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        _, status = os.waitpid(pid, 0)
    except _Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _kill_descendants()
    _end_as(status)


def _kill_descendants() -> None:
    """Kill every descendant and reap it; those re-parented meanwhile are found on the next pass."""
    while found := _descendants():
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(-1, 0)  # a direct child was among them, so this returns
        _reap()
    _reap()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _descendants() -> list[int]:
    """The processes whose parent chain leads to this one (zombies included), from /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue  # gone meanwhile
        fields = data.rpartition(b")")[2].split()  # the name before it may hold spaces and ")"
        children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _end_as(status: int | None) -> None:
    """Exit with the script's status, or die of the signal that ended it (SIGKILL if we ended it)."""
    if status is not None and os.WIFEXITED(status):
        os._exit(os.WEXITSTATUS(status))
    signum = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else signal.SIGKILL
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the script's crash, not a second core file
    if signum != signal.SIGKILL:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # a signal whose default is not to end the process


if __name__ == "__main__":
    main(sys.argv)
