require_relative "helper"

# Bad arguments raise ArgumentError/TypeError naming the argument, and
# nothing in the segment changes.
class TestBadArgs < Minitest::Test
  include BrkTest

  def assert_rejects(cls, word)
    used = @seg.info["used"]
    e = assert_raises(cls) { yield }
    assert_includes e.message, word
    assert_equal used, @seg.info["used"], "the segment changed"
  end

  def test_breaker_settings
    assert_rejects(ArgumentError, "open") { @seg.breaker("b/a", open: "soon") }
    assert_rejects(ArgumentError, "open") { @seg.breaker("b/a", open: -1) }
    assert_rejects(TypeError, "open") { @seg.breaker("b/a", open: :fast) }
    assert_rejects(TypeError, "failure_threshold") { @seg.breaker("b/a", failure_threshold: 2.5) }
    assert_rejects(ArgumentError, "failure_threshold") { @seg.breaker("b/a", failure_threshold: 0) }
    assert_rejects(ArgumentError, "half_open_probes") { @seg.breaker("b/a", half_open_probes: 99) }
    assert_rejects(ArgumentError, "max_open") { @seg.breaker("b/a", open: "2m", max_open: "1m") }
    assert_rejects(ArgumentError, "failure_rate") { @seg.breaker("b/a", failure_rate: 150) }
    assert_rejects(ArgumentError, "slow_rate") { @seg.breaker("b/a", slow_call: "1s") }
    assert_rejects(TypeError, "fleet") { @seg.breaker("b/a", fleet: 1) }
    assert_rejects(TypeError, "concurrency_auto: true") { @seg.breaker("b/a", max_concurrent: "auto") }
    assert_rejects(TypeError, "concurrency_auto") { @seg.breaker("b/a", concurrency_auto: 1) }
    assert_rejects(ArgumentError, "min_concurrent=9") do
      @seg.breaker("b/a", concurrency_auto: true, max_concurrent: 8, min_concurrent: 9)
    end
    assert_rejects(ArgumentError, "unknown setting") { @seg.breaker("b/a", treshold: 3) }
    assert_rejects(TypeError, "exclude") { @seg.breaker("b/a", exclude: ["IOError"]) }
  end

  def test_names
    assert_rejects(ArgumentError, "name") { @seg.breaker("bad name") }
    assert_rejects(ArgumentError, "name") { @seg.breaker("a//b") }
    assert_rejects(ArgumentError, "name") { @seg.breaker("x" * 64) }
    assert_rejects(TypeError, "name") { @seg.breaker(:sym) }
    assert_rejects(ArgumentError, "name") { @seg.bucket("no good", rate: 1, burst: 1) }
  end

  def test_limits
    assert_rejects(ArgumentError, "rate") { @seg.bucket("l/a", rate: 0, burst: 1) }
    assert_rejects(TypeError, "rate") { @seg.bucket("l/a", rate: "10", burst: 1) }
    assert_rejects(ArgumentError, "burst") { @seg.bucket("l/a", rate: 1, burst: 0) }
    assert_rejects(ArgumentError, "ratio") { @seg.budget("l/b", floor: 1, ratio: 1000) }
    assert_rejects(ArgumentError, "floor") { @seg.pace("l/c", ceiling: 10, floor: 20) }
    pace = @seg.pace("l/d", ceiling: 10)
    assert_rejects(ArgumentError, "priority") { pace.take(priority: :urgent) }
  end

  def test_permit_reports
    br = @seg.breaker("b/p")
    p = br.acquire
    assert_raises(ArgumentError) { p.failure(reason: :bored) }
    assert_raises(ArgumentError) { p.report_http(1234) }
    assert_raises(TypeError) { p.report_http("200") }
    assert_raises(ArgumentError) { p.success(retry_after: "later") }
    refute p.released?
    assert p.success
  end

  def test_attach_and_clock
    assert_raises(TypeError) { Breakerd.attach(shm: @shm, clock: Object.new) }
    e = assert_raises(Breakerd::Error) { Breakerd.attach(shm: "no-slash") }
    assert_includes e.message, "no-slash"
    assert_raises(ArgumentError) { @clock.advance(-1) }
    assert_raises(TypeError) { @clock.advance(nil) }
    assert_raises(ArgumentError) { @seg.breaker("b/t").trip(0) }
  end
end
