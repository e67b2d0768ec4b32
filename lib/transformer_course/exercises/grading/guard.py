"""Importing this module refuses every connection except to loopback, for this process.

Self-contained (standard library only), because ``offline.write_sitecustomize`` copies this very
file as a ``sitecustomize.py`` into child processes, where the course may not be importable.
See ``transformer_course.exercises.grading.offline`` for why and where.
"""

import ipaddress
import os
import socket

#: The environment variable naming a file where every refused connection is appended.
BLOCKED_LOG_ENV_VAR = "TRANSFORMER_COURSE_BLOCKED_LOG"


class OfflineError(ConnectionRefusedError):
    """A connection to a host other than this machine, refused by the guard."""


def is_loopback(host):
    """True for 127.0.0.0/8, ::1 and ``localhost``; False for every other name or address."""
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(sock, address):
    # Unix sockets (and other families) are local by nature.
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if is_loopback(host):
        return
    log = os.environ.get(BLOCKED_LOG_ENV_VAR)
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{address!r}\n")
    raise OfflineError(f"network access is blocked here (tried to connect to {address!r})")


def _install():
    if getattr(socket.socket.connect, "_course_offline", False):
        return  # already guarded (the module was imported under two names)
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def connect(self, address):
        _check(self, address)
        return original_connect(self, address)

    def connect_ex(self, address):
        _check(self, address)
        return original_connect_ex(self, address)

    connect._course_offline = True
    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex


_install()
