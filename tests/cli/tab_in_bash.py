#!/usr/bin/python3
"""tab_in_bash.py HOME PATH XDG_DATA_DIRS KEYS - start a real interactive
bash (`bash -i`, on a pseudo-terminal, with that HOME, so its ~/.bashrc)
and type KEYS ("\\t" for Tab); print what the terminal showed. Stops by
itself: every read waits at most 2 s, and the shell is killed at the end."""
import os
import pty
import select
import signal
import sys
import time

home, path, xdg, keys = sys.argv[1:5]
env = {"HOME": home, "TERM": "dumb", "PATH": path, "XDG_DATA_DIRS": xdg,
       "LC_ALL": "C"}
pid, fd = pty.fork()
if pid == 0:
    os.chdir(home)
    os.execve("/bin/bash", ["bash", "-i"], env)


def read(secs):
    out, end = b"", time.time() + secs
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return out.decode(errors="replace")


read(2)  # the prompt
os.write(fd, keys.encode().replace(b"\\t", b"\t"))
sys.stdout.write(read(2))
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
