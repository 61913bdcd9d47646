"""Before `make run` starts anything: its folder and its ports are its own, or it says what holds them.

scripts/run.sh opens `$VAR_DIR/run/make-run.lock` on a file descriptor and runs
`python scripts/preflight.py VAR_DIR FD`. This takes an exclusive flock on that open file (run.sh and
supervisord inherit it, so the folder stays taken until both have ended, and nothing is left to clean up
after a crash), writes who holds it into the file, and checks that PORT and STREAM_PORT on HOST, and
REDIS_PORT on 127.0.0.1 when `make run` starts its own Redis (START_REDIS=true), are free.
Exit 0: go on. Exit 1: what is in the way (the other `make run`, or the pid holding a port) and how to run
a second one beside it, on stderr; nothing was started or changed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
from pathlib import Path

REDIS_HOST = "127.0.0.1"  # scripts/supervisord.conf binds Redis there
PORT_STEP = 10  # a second run is offered PORT + 10 and PORT + 11 (the next free pair)


def main(var_dir: Path, lock_fd: int) -> int:
    """0 when this run may start; 1, with the reason on stderr, when something is in the way."""
    host = os.environ["HOST"]
    port, stream_port = int(os.environ["PORT"]), int(os.environ["STREAM_PORT"])
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = read_holder(lock_fd)
        free = suggested_ports(host, port, stream_port, taken={holder.get("port"), holder.get("stream_port")})
        print(folder_in_use(var_dir, holder, free, checkout=Path.cwd()), file=sys.stderr)
        return 1
    write_holder(lock_fd, {"pid": os.getppid(), "host": host, "port": port, "stream_port": stream_port})
    wanted = [("PORT", host, port), ("STREAM_PORT", host, stream_port)]
    if os.environ.get("START_REDIS") == "true":
        wanted.append(("REDIS_PORT", REDIS_HOST, int(os.environ["REDIS_PORT"])))
    for name, where, number in wanted:
        if not is_free(where, number):
            free = suggested_ports(host, port, stream_port)
            print(port_taken(name, where, number, holder_of(number), free), file=sys.stderr)
            return 1
    return 0


def read_holder(lock_fd: int) -> dict[str, int | str]:
    """What the running `make run` wrote into the lock file (empty while it has not written it yet)."""
    with contextlib.suppress(OSError, ValueError):
        found = json.loads(os.pread(lock_fd, 4096, 0) or b"{}")
        if isinstance(found, dict):
            return found
    return {}


def write_holder(lock_fd: int, holder: dict[str, int | str]) -> None:
    os.ftruncate(lock_fd, 0)
    os.pwrite(lock_fd, json.dumps(holder).encode() + b"\n", 0)


def is_free(host: str, port: int) -> bool:
    """Whether a server may listen on host:port now (SO_REUSEADDR, as gunicorn binds)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError:
            return False
    return True


def suggested_ports(host: str, port: int, stream_port: int, taken: set[object] | None = None) -> tuple[int, int]:
    """The ports asked for when both are free and not `taken`, else the first free pair PORT + 10k, + 1."""
    taken = taken or set()
    if port not in taken and stream_port not in taken and is_free(host, port) and is_free(host, stream_port):
        return port, stream_port
    candidate = port + PORT_STEP
    while candidate < 65535 and not (is_free(host, candidate) and is_free(host, candidate + 1)):
        candidate += PORT_STEP
    return candidate, candidate + 1


def folder_in_use(var_dir: Path, holder: dict[str, int | str], free: tuple[int, int], checkout: Path) -> str:
    """The refusal when another `make run` holds `var_dir`, with the command that runs one beside it."""
    pid = holder.get("pid", "unknown")
    serving = f"serving http://{holder['host']}:{holder['port']}" if "port" in holder else "starting"
    port, stream_port = free
    return (
        f"make run: {var_dir} is in use by another make run (pid {pid}, {serving}); nothing was started.\n"
        "To run a second one beside it, give it its own ports and folder:\n"
        f"  PORT={port} STREAM_PORT={stream_port} VAR_DIR={shown(var_dir / str(port), checkout)} make run\n"
        f"or stop the first one (Ctrl-C in its terminal, or kill {pid})."
    )


def port_taken(name: str, host: str, port: int, holder: str, free: tuple[int, int]) -> str:
    """The refusal when `holder` listens on the port of setting `name`."""
    other, other_stream = free
    advice = (
        "leave REDIS_PORT unset (make run then takes a free one)"
        if name == "REDIS_PORT"
        else f"choose free ports, e.g. PORT={other} STREAM_PORT={other_stream} make run"
    )
    return f"make run: port {port} on {host} ({name}) is taken by {holder}; nothing was started.\nStop it, or {advice}."


def shown(folder: Path, checkout: Path) -> str:
    """`folder` relative to the checkout when it lies inside it (var/8010), else as it is."""
    with contextlib.suppress(ValueError):
        return str(folder.relative_to(checkout))
    return str(folder)


def holder_of(port: int) -> str:
    """The process listening on `port` ("pid 1234 (its command line)"), as far as /proc shows it."""
    pids = listening_pids(port)
    if not pids:
        return "another program (its pid is not visible here)"
    # gunicorn's workers share their master's socket: name the process whose parent does not hold it
    first = [pid for pid in pids if parent_of(pid) not in pids] or pids
    return ", ".join(f"pid {pid} ({command_of(pid)})" for pid in first)


def listening_pids(port: int) -> list[int]:
    """The pids with a listening TCP socket on `port` open (Linux /proc; empty elsewhere)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                    inodes.add(f"socket:[{fields[9]}]")
    found: list[int] = []
    for entry in Path("/proc").iterdir() if inodes else []:
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if any(os.readlink(fd) in inodes for fd in (entry / "fd").iterdir()):
                    found.append(int(entry.name))
    return sorted(found)


def parent_of(pid: int) -> int | None:
    with contextlib.suppress(OSError):
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return None


def command_of(pid: int, width: int = 200) -> str:
    with contextlib.suppress(OSError):
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        return command if len(command) <= width else command[: width - 3] + "..."
    return "?"


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), int(sys.argv[2])))
