"""Issue 13: the fleet settings from Python. Breakers: fleet= and
fleet_probe= (create and configure, info()["config"], bool only); paces:
fleet= (create and update, info()["pace"]["fleet"]). What Python stores
is what bctl shows (the same record)."""
import pytest


def test_breaker_fleet_settings_are_opt_in_and_stored(seg):
    plain = seg.breaker("f/plain")
    cfg = plain.info()["config"]
    assert cfg["fleet"] is False and cfg["fleet_probe"] is False
    br = seg.breaker("f/api", fleet=True, fleet_probe=True, open=7)
    cfg = br.info()["config"]
    assert cfg["fleet"] is True and cfg["fleet_probe"] is True
    br.configure(fleet_probe=False)  # only that one; the others kept
    cfg = br.info()["config"]
    assert cfg["fleet"] is True and cfg["fleet_probe"] is False
    assert cfg["open_ms"] == 7000


@pytest.mark.parametrize("kw", ["fleet", "fleet_probe"])
@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_breaker_fleet_settings_take_bools_only(seg, kw, bad):
    with pytest.raises(TypeError, match=kw):
        seg.breaker("f/bad", **{kw: bad})
    assert seg.record_count() == 0  # nothing created
    br = seg.breaker("f/keep", fleet=True)
    with pytest.raises(TypeError, match=kw):
        br.configure(**{kw: bad})
    assert br.info()["config"]["fleet"] is True


def test_pace_fleet_is_stored_and_updated_alone(seg):
    p = seg.pace("f/pace", ceiling=100, reserve_pct=10)
    assert p.info()["pace"]["fleet"] is False
    q = seg.pace("f/fleetpace", ceiling=50, fleet=True)
    assert q.info()["pace"]["fleet"] is True
    p.update(fleet=True)
    i = p.info()["pace"]
    assert i["fleet"] is True and i["reserve_pct"] == 10
    assert i["ceiling"] == pytest.approx(100)
    p.update(ceiling=200)  # fleet kept
    assert p.info()["pace"]["fleet"] is True
    with pytest.raises(TypeError, match="fleet"):
        p.update(fleet=1)
    with pytest.raises(TypeError, match="fleet"):
        seg.pace("f/badpace", ceiling=5, fleet="on")
    assert p.info()["pace"]["fleet"] is True


def test_bctl_shows_what_python_stored(seg, bctl):
    seg.breaker("f/xl", fleet=True)
    seg.pace("f/xlpace", ceiling=10, fleet=True)
    cfg = bctl.json("inspect", "f/xl")["config"]
    assert cfg["fleet"] is True and cfg["fleet_probe"] is False
    assert bctl.json("inspect", "f/xlpace")["pace"]["fleet"] is True
    bctl.run("config", "f/xl", "--fleet-probe", "on")  # and back
    assert seg.breaker("f/xl").info()["config"]["fleet_probe"] is True
