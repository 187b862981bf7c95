"""The Python examples of README.md and docs/guide/*.md run as written, and
print what the page says they print; set-up command 1 installs what the
package needs. (tests/readme/docs_examples.sh checks that every fenced
block of these pages is run by a test or marked; the python ones are run
here.)"""

import glob
import os
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import unique_shm, unlink

SRC = os.environ.get("BRKPY_SRCDIR", os.path.join(os.path.dirname(__file__), "..", ".."))
README = os.path.join(SRC, "README.md")
PAGES = [README] + sorted(glob.glob(os.path.join(SRC, "docs", "guide", "*.md")))

FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


def fenced(text):
    """Every fenced block of a page: (lang, code dedented, the text after it)."""
    out, cur, indent, lang = [], None, "", ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if cur is None and m:
            cur, indent, lang = [], m.group(1), m.group(2)
        elif cur is not None and m and not m.group(2):
            rest = "\n".join(lines[i + 1:])
            out.append((lang, textwrap.dedent("\n".join(cur)) + "\n", rest))
            cur = None
        elif cur is not None:
            cur.append(line[len(indent):] if line.startswith(indent) else line)
    return out


def python_blocks():
    """(page, n, code, shown): the python blocks of every page; shown is the
    output the page gives right after the block ("it prints" and a bare
    fenced block), else None."""
    found = []
    for page in PAGES:
        text = open(page, encoding="utf-8").read()
        n = 0
        for lang, code, rest in fenced(text):
            if lang != "python":
                continue
            n += 1
            shown = None
            m = re.match(r"\s*(?:[^\n`]+\n)*?[^\n]*it prints[^\n]*\n(?:[^\n`]*\n)*?\s*```\n(.*?)```",
                         rest, re.S)
            if m:
                shown = m.group(1)
            found.append((os.path.relpath(page, SRC), n, code, shown))
    return found


BLOCKS = python_blocks()


def normalise(out):
    return re.sub(r"\d+(\.\d+)? s\b", "N s", out)


def run_python(code, tmp_path, shm):
    path = tmp_path / "example.py"
    path.write_text(code)
    env = dict(os.environ, BREAKERD_SHM=shm)
    if "libasan" in env.get("LD_PRELOAD", ""):
        # The ASan stage: an example loads celery, httpx, aiohttp... and the
        # interpreter leaves objects at exit from frames of Debian's
        # python3.11 that have no symbol (e.g. python3.11+0x678716), which
        # tests/python/lsan.supp cannot name without hiding leaks of ours.
        # Leak checking stays on for every other test of the suite.
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


# What a fragment takes as given: a private segment `seg`, and for the
# integrations a loopback HTTP server that answers 200 (`url`), requests
# sessions, a Celery app (in-memory broker) and an APScheduler scheduler.
PRELUDE = """\
import http.server, threading
import breakerd
seg = breakerd.attach()

class _Ok(http.server.BaseHTTPRequestHandler):
    def _ok(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    do_GET = do_POST = _ok
    def log_message(self, *args):
        pass

_srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
threading.Thread(target=_srv.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{_srv.server_port}/charge"
"""
GIVEN = {
    "session": "import requests\nsession = requests.Session()\n",
    "plain_session": "import requests\nplain_session = requests.Session()\n",
    "app": "import celery\napp = celery.Celery('docs', broker='memory://')\n",
    "sched": ("from apscheduler.schedulers.background import BackgroundScheduler\n"
              "sched = BackgroundScheduler()\n"),
}


def prelude_for(code):
    given = [v for k, v in GIVEN.items() if re.search(r"\b%s\b" % k, code)]
    return PRELUDE + "".join(given)


def test_pages_have_python_examples():
    pages = {page for page, _, _, _ in BLOCKS}
    assert "README.md" in pages and os.path.join("docs", "guide", "python.md") in pages, pages
    shown = [page for page, _, _, out in BLOCKS if out is not None]
    assert "README.md" in shown and os.path.join("docs", "guide", "python.md") in shown, shown


@pytest.mark.parametrize("page,n,code,shown", BLOCKS,
                         ids=[f"{p}#{n}" for p, n, _, _ in BLOCKS])
def test_python_block_runs(page, n, code, shown, tmp_path):
    """A block that attaches its own segment runs as written (and prints
    what its page shows, if the page shows it); any other runs after the
    prelude that gives it what it takes as given."""
    whole = "breakerd.attach(" in code
    shm = unique_shm()
    try:
        p = run_python(code if whole else prelude_for(code) + code, tmp_path, shm)
        assert p.returncode == 0, f"{page} python block {n}:\n{p.stderr}\n{code}"
        if shown is not None:
            assert normalise(p.stdout) == normalise(shown), f"{page} python block {n}"
        if whole:
            assert os.path.exists("/dev/shm" + shm)
    finally:
        unlink(shm)


def test_setup_command_installs_the_package():
    text = open(README, encoding="utf-8").read()
    line = next(l for l in text.splitlines() if l.startswith("apt-get update && apt-get install -y"))
    # .ci/run's parse: the package list up to the first "&&"
    pkgs = re.match(r"apt-get update && apt-get install -y ([^&]*) &&", line).group(1).split()
    for pkg in ("python3-dev", "python3-mesonpy", "python3-pip", "python3-venv",
                "python3-pytest", "python3-gunicorn", "pkg-config"):
        assert pkg in pkgs, pkg
    assert ("ninja -C build install && ldconfig && /usr/bin/python3 -m pip install "
            "--no-build-isolation --break-system-packages ./bindings/python") in line


def test_install_from_a_scratch_prefix(tmp_path):
    """Set-up command 1's install steps, into a DESTDIR and a venv instead of
    /usr/local: `meson install`, then pip with the README's flags building
    against the installed breaker.pc."""
    build = os.environ.get("BRKPY_BUILDDIR")
    if not build:
        pytest.skip("BRKPY_BUILDDIR not set (run through meson test)")
    dest = tmp_path / "dest"
    subprocess.run(["meson", "install", "-C", build, "--no-rebuild", "--quiet",
                    "--destdir", str(dest)], check=True, capture_output=True, timeout=300)
    pcs = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs if f == "breaker.pc"]
    assert len(pcs) == 1 and "/usr/local/" in pcs[0], pcs
    libdir = os.path.dirname(os.path.dirname(pcs[0]))
    # the installed breaker.pc, relocated from /usr/local to the DESTDIR
    pcdir = tmp_path / "pc"
    pcdir.mkdir()
    text = open(pcs[0]).read()
    assert "prefix=/usr/local\n" in text
    (pcdir / "breaker.pc").write_text(text.replace("prefix=/usr/local\n",
                                                   f"prefix={dest}/usr/local\n", 1))
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    env = dict(os.environ, PKG_CONFIG_PATH=str(pcdir), LD_LIBRARY_PATH=libdir)
    env.pop("PYTHONPATH", None)
    # the ASan stage preloads libasan into python (tests/python/run.sh);
    # the compilers pip runs are not ours to check, and fail under it
    build_env = {k: v for k, v in env.items() if k != "LD_PRELOAD"}
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                          "--no-index", "--no-build-isolation", "--break-system-packages",
                          os.path.join(SRC, "bindings", "python")],
                         env=build_env, capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    shm = unique_shm()
    try:
        code = ("import breakerd, sys; seg = breakerd.attach(sys.argv[1]); "
                "print(breakerd.__file__); print(seg.breaker('install/check').state)")
        p = subprocess.run([str(venv / "bin" / "python"), "-c", code, shm], env=env,
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    finally:
        unlink(shm)
    assert p.returncode == 0, p.stderr
    where, state = p.stdout.split()
    assert where.startswith(str(venv)) and state == "closed"


PY_README = os.path.join(SRC, "bindings", "python", "README.md")


def test_python_readme_pacing_example_runs_as_written(tmp_path):
    """bindings/python/README.md "Pacing and admission": the example prints what the
    section says it prints."""
    text = open(PY_README, encoding="utf-8").read()
    sec = text[text.index("## Pacing and admission"):]
    example = next(code for lang, code, _ in fenced(sec) if lang == "python")
    shown = re.search(r"it prints\s*\n\s*```\n(.*?)```", sec, re.S).group(1)
    shm = unique_shm()
    try:
        p = run_python(example, tmp_path, shm)
        assert p.returncode == 0, p.stderr
        assert p.stdout == shown
    finally:
        unlink(shm)
