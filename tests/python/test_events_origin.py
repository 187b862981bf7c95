"""Segment.events(): the "origin" of each event - "" for this host's own
decision, the fleet peer's host id for one breakerd --fleet applied
(written here by tests/cli/mkorigin, which calls brk_set_origin())."""

import os
import subprocess

import pytest

import breakerd


def mkorigin():
    path = os.path.join(os.environ.get("BRKPY_BUILDDIR", ""), "tests", "cli", "mkorigin")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path}: not built (run through meson test)")
    return path


def test_events_carry_their_origin(shm):
    subprocess.run([mkorigin(), shm, "host-b"], check=True, timeout=60)
    s = breakerd.attach(shm)
    try:
        evs, _ = s.events()
    finally:
        s.close()
    got = [(e["name"], e["reason"], e["from"], e["to"], e["origin"]) for e in evs]
    assert got == [("fleet/a", "trip", "closed", "open", "host-b"),
                   ("fleet/a", "reset", "open", "closed", ""),
                   ("", "fleet_link", "off", "connecting", ""),
                   ("fleet/p", "pace_cut", "closed", "closed", "host-b")]


def test_local_events_have_an_empty_origin(seg):
    br = seg.breaker("local/a")
    br.trip(1.0)
    assert [e["origin"] for e in seg.events()[0]] == [""]
