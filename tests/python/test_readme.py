"""The README's Python section: its example runs as written and prints what
the README says; set-up command 1 installs what the package needs."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import unique_shm, unlink

SRC = os.environ.get("BRKPY_SRCDIR", os.path.join(os.path.dirname(__file__), "..", ".."))
README = os.path.join(SRC, "README.md")


def section():
    text = open(README, encoding="utf-8").read()
    start = text.index("## Using breakerd from Python")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def blocks(text, lang):
    """Fenced blocks of ``lang`` ('' for a bare fence), dedented."""
    out, cur, indent = [], None, ""
    for line in text.splitlines():
        m = re.match(r"^(\s*)```(\w*)$", line)
        if m and cur is None and m.group(2) == lang:
            cur, indent = [], m.group(1)
        elif m and cur is not None and not m.group(2):
            out.append(textwrap.dedent("\n".join(cur)) + "\n")
            cur = None
        elif cur is not None:
            cur.append(line[len(indent):] if line.startswith(indent) else line)
        elif m and m.group(2) == "" and not out and lang == "":
            cur, indent = [], m.group(1)
    return out


def normalise(out):
    return re.sub(r"\d+(\.\d+)? s\b", "N s", out)


def run_python(code, tmp_path, shm):
    path = tmp_path / "example.py"
    path.write_text(code)
    env = dict(os.environ, BREAKERD_SHM=shm)
    return subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def test_readme_example_runs_as_written(tmp_path):
    sec = section()
    example = blocks(sec, "python")[0]
    shown = re.search(r"it prints[^\n]*\n(?:[^\n]*\n)*?\s*```\n(.*?)```", sec, re.S).group(1)
    shm = unique_shm()
    try:
        p = run_python(example, tmp_path, shm)
        assert p.returncode == 0, p.stderr
        assert normalise(p.stdout) == normalise(shown)
        assert os.path.exists("/dev/shm" + shm)
    finally:
        unlink(shm)


def test_readme_fragments_run(tmp_path):
    frags = blocks(section(), "python")[1:]
    assert frags, "the bucket/budget fragment is missing"
    shm = unique_shm()
    try:
        for code in frags:
            p = run_python("import breakerd\nseg = breakerd.attach()\n" + code, tmp_path, shm)
            assert p.returncode == 0, p.stderr + code
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
            "--no-build-isolation --break-system-packages ./python") in line


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
                          os.path.join(SRC, "python")],
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


PY_README = os.path.join(SRC, "python", "README.md")


def test_python_readme_pacing_example_runs_as_written(tmp_path):
    """python/README.md "Pacing and admission": the example prints what the
    section says it prints."""
    text = open(PY_README, encoding="utf-8").read()
    sec = text[text.index("## Pacing and admission"):]
    example = blocks(sec, "python")[0]
    shown = re.search(r"it prints\s*\n\s*```\n(.*?)```", sec, re.S).group(1)
    shm = unique_shm()
    try:
        p = run_python(example, tmp_path, shm)
        assert p.returncode == 0, p.stderr
        assert p.stdout == shown
    finally:
        unlink(shm)
