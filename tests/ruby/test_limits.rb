require_relative "helper"

class TestLimits < Minitest::Test
  include BrkTest

  def test_bucket
    k = @seg.bucket("k/a", rate: 10, burst: 2)
    assert k.take
    assert_equal 0.0, k.try_take
    e = assert_raises(Breakerd::NoTokens) { k.take }
    assert_in_delta 0.15, e.wait, 0.051
    @clock.advance("100ms")
    assert k.take
    info = k.info
    assert_equal [3, 1], [info["counters"]["taken"], info["counters"]["denied"]]
  end

  def test_budget
    g = @seg.budget("k/b", floor: 0, ratio: 0.5)
    assert_raises(Breakerd::RetryDeferred) { g.retry }
    2.times { g.deposit }
    assert_equal true, g.retry
    assert_equal false, g.try_retry
    assert_equal 2, g.info["counters"]["deferred"]
  end

  def test_pace
    pc = @seg.pace("k/c", ceiling: 100, burst: 1)
    t = pc.take
    e = assert_raises(Breakerd::NoTokens) { pc.take(wait: "1s") } # never sleeps on a FakeClock
    assert_operator e.wait, :>, 0
    assert_equal true, t.report(429, { "Retry-After" => "1" })
    assert_raises(Breakerd::Error) { t.report(200) }
    # the first cut, with no success to estimate from: limit 0.7 x 100 =
    # 70/s (BRK_PACE_NODATA_CUT), held at BRK_PACE_HOLD_GAIN 0.97 x 70
    assert_in_delta 67.9, pc.info["pace"]["rate"], 0.05
  end

  def test_durations
    assert_equal 0.25, Breakerd.parse_duration("250ms")
    assert_equal 1.5, Breakerd.parse_duration(1.5)
    assert_raises(ArgumentError) { Breakerd.parse_duration("5") }
    assert_equal [:failure, :rate_limited, 2.0], Breakerd.classify_http(429, { "Retry-After" => "2" })
    assert_equal [:healthy_error, :none, nil], Breakerd.classify_http(404)
  end
end
