require_relative "helper"

class TestBreaker < Minitest::Test
  include BrkTest

  def test_call_returns_the_blocks_value_and_counts_a_success
    br = @seg.breaker("t/a")
    assert_equal 42, br.call { 42 }
    assert_equal 1, br.info["counters"]["successes"]
  end

  def test_an_exception_is_a_failure_with_its_reason_and_is_reraised
    br = @seg.breaker("t/b", failure_threshold: 3)
    assert_raises(Errno::ECONNREFUSED) { br.call { raise Errno::ECONNREFUSED } }
    assert_raises(Timeout::Error) { br.call { raise Timeout::Error } }
    assert_raises(RuntimeError) { br.call { raise "boom" } }
    by = br.info["counters"]["failures_by_reason"]
    assert_equal [1, 1, 1], [by["connect"], by["timeout"], by["other"]]
    assert_equal :open, br.state
  end

  def test_exclude_is_a_healthy_error_and_ignore_counts_neither_way
    missing = Class.new(StandardError)
    invalid = Class.new(StandardError)
    br = @seg.breaker("t/c", failure_threshold: 1, exclude: [missing], ignore: invalid)
    assert_raises(missing) { br.call { raise missing } }
    assert_raises(invalid) { br.call { raise invalid } }
    assert_raises(KeyError) { br.call(exclude: ->(e) { e.is_a?(KeyError) }) { raise KeyError } }
    c = br.info["counters"]
    assert_equal [2, 1, 0], [c["healthy_errors"], c["ignored"], c["failures"]]
    assert_equal :closed, br.state
  end

  def test_an_interrupt_or_a_refusal_inside_the_block_is_cancelled
    br = @seg.breaker("t/d", failure_threshold: 1)
    inner = @seg.breaker("t/inner")
    inner.force_open
    assert_raises(Interrupt) { br.call { raise Interrupt } }
    assert_raises(Breakerd::CircuitOpen) { br.call { inner.call { 1 } } }
    assert_equal 2, br.info["counters"]["cancelled"]
    assert_equal :closed, br.state
  end

  def test_acquire_with_a_block_reports_what_the_block_did_not
    # a 503 with Retry-After that cools (implicit_pace off: by default the
    # breaker's implicit pace would take it, cause "paced")
    br = @seg.breaker("t/e", failure_threshold: 5, max_wait: "10s", implicit_pace: false)
    br.acquire { |p| p.report_http(503, { "retry-after" => "3" }) }
    e = assert_raises(Breakerd::Cooling) { br.call { 1 } }
    assert_in_delta 3.0, e.wait, 0.76
    assert_equal "cooling", e.cause
    assert_equal "t/e", e.breaker
    assert_equal "COOLING", e.code
    @clock.advance(3)
    assert_equal :ok, br.acquire { |_p| :ok }
  end

  def test_break_and_throw_out_of_call_are_successes
    br = @seg.breaker("t/q", max_concurrent: 1)
    [1, 2].each { |i| br.call { break i } }
    catch(:done) { br.call { throw :done } }
    c = br.info
    assert_equal [3, 0], [c["counters"]["successes"], c["in_flight"]]
    assert_raises(LocalJumpError) { br.call }
    assert_raises(LocalJumpError) { br.call(exclude: IOError) }
  end

  def test_a_permit_is_counted_once
    br = @seg.breaker("t/f")
    p = br.acquire
    assert_nil p.counted
    assert_equal true, p.success
    assert_equal false, p.failure
    assert_equal true, p.counted
    assert_equal 1, br.info["counters"]["successes"]
  end

  def drop_a_permit(br)
    br.acquire
    nil
  end

  def test_a_lost_permit_is_released_cancelled_when_collected
    br = @seg.breaker("t/g", max_concurrent: 1)
    drop_a_permit(br)
    assert_equal 1, br.info["in_flight"]
    deep = ->(n) { n.zero? ? 0 : deep.call(n - 1) + 1 } # overwrite the stack the permit was on
    10.times do
      deep.call(300)
      GC.start(full_mark: true, immediate_sweep: true)
      break if br.info["in_flight"].zero?
    end
    assert_equal 0, br.info["in_flight"]
    assert_equal 1, br.info["counters"]["cancelled"]
  end

  def test_refusals_by_class
    br = @seg.breaker("t/h", failure_threshold: 1, open: "2s", max_concurrent: 1)
    held = br.acquire
    e = assert_raises(Breakerd::BulkheadFull) { br.acquire }
    assert_equal 0.0, e.wait
    held.failure(reason: :timeout)
    e = assert_raises(Breakerd::CircuitOpen) { br.call { 1 } }
    assert_kind_of Breakerd::Refused, e
    assert_operator e.wait, :>=, 2.0
    br.reset
    br.force_open
    assert_equal "forced_open", assert_raises(Breakerd::CircuitOpen) { br.call { 1 } }.cause
  end

  def test_trip_reset_and_modes
    br = @seg.breaker("t/i")
    assert_equal true, br.trip("30s")
    assert_equal false, br.trip(60)
    assert_equal 30_000, br.info["open_remaining_ms"]
    br.reset
    assert_equal :closed, br.state
    assert_equal true, br.disable
    assert_equal false, br.disable
    assert_equal "disabled", br.info["mode"]
    br.normal
    assert_equal "normal", br.info["mode"]
  end

  def test_configure_changes_only_the_given_settings
    br = @seg.breaker("t/j", failure_threshold: 3, open: "2s")
    br.configure(failure_threshold: 7)
    cfg = br.info["config"]
    assert_equal [7, 2000], [cfg["failure_threshold"], cfg["open_ms"]]
    assert_raises(ArgumentError) { br.configure(max_open: "1s") }
    assert_equal 600_000, br.info["config"]["max_open_ms"]
  end

  def test_every_setting_of_the_defaults_table
    br = @seg.breaker("t/k", failure_threshold: 4, open: 1.5, max_open: "1m", half_open_probes: 2,
                             success_threshold: 2, probe_timeout: "5s", max_wait: "20s",
                             max_concurrent: 8, failure_rate: 50, window: "30s", min_calls: 10,
                             slow_call: "500ms", slow_rate: 80, min_distinct_processes: 2,
                             reserve_pct: 25, hold_histogram: true, fleet: true, fleet_probe: true,
                             implicit_pace: false)
    cfg = br.info["config"]
    want = { "failure_threshold" => 4, "open_ms" => 1500, "max_open_ms" => 60_000, "half_open_probes" => 2,
             "success_threshold" => 2, "probe_timeout_ms" => 5000, "max_wait_ms" => 20_000,
             "max_concurrent" => 8, "failure_rate_pct" => 50, "window_ms" => 30_000, "min_calls" => 10,
             "slow_call_ms" => 500, "slow_rate_pct" => 80, "min_distinct_processes" => 2,
             "reserve_pct" => 25, "hold_histogram" => true, "fleet" => true, "fleet_probe" => true,
             "implicit_pace" => false }
    assert_equal want, cfg.slice(*want.keys)
  end

  # max_concurrent = auto as the C fields: concurrency_auto, min_concurrent
  # and max_concurrent (the bound; 0: LIMITS["max_concurrent"]); the
  # learned limit starts at 4 (docs/design/limits.md "Adaptive concurrency")
  def test_a_learned_bulkhead_limit_by_its_c_fields
    br = @seg.breaker("t/auto", concurrency_auto: true, min_concurrent: 2, max_concurrent: 8)
    info = br.info
    want = { "concurrency_auto" => true, "min_concurrent" => 2, "max_concurrent" => 8 }
    assert_equal want, info["config"].slice(*want.keys)
    assert_equal 4.0, info["concurrency_limit"]
    assert_equal 4, info["signals"]["remaining_concurrent"]
    br.configure(max_concurrent: 6, concurrency_auto: false)
    info = br.info
    assert_equal [false, 6], info["config"].values_at("concurrency_auto", "max_concurrent")
    assert_equal 6.0, info["concurrency_limit"]
    assert_nil info["latency_recent_us"]
  end

  def test_a_second_handle_shares_the_state
    @seg.breaker("t/l", failure_threshold: 1).tap { |b| fail_times(b, 1) }
    other = Breakerd.attach(shm: @shm, clock: @clock)
    assert_equal :open, other.breaker("t/l").state
    other.close
  end

  def test_events
    br = @seg.breaker("t/m", failure_threshold: 1)
    fail_times(br, 1)
    evs, cursor = @seg.events
    assert_equal ["threshold"], evs.map { |e| e["reason"] }
    assert_equal "t/m", evs[0]["name"]
    assert_equal [[], cursor], @seg.events(cursor)
  end

  def test_closed_segment_raises
    br = @seg.breaker("t/n")
    @seg.close
    assert_raises(Breakerd::Error) { br.call { 1 } }
    assert @seg.closed?
  end

  def test_info_has_the_fields_of_bctl_inspect_json
    real = Breakerd.attach(shm: @shm)
    br = real.breaker("t/o", failure_threshold: 4, max_concurrent: 3, window: "1h")
    br.call { 1 }
    fail_times(br, 2, Timeout::Error)
    held = br.acquire
    mine = br.info
    theirs = bctl_json("inspect", "t/o")
    theirs.delete("segment")
    assert_equal theirs.keys.sort, mine.keys.sort
    [mine, theirs].each do |d|
      d["leases"].each { |l| l.delete("age_ms") }
      d["signals"].delete("oldest_in_flight_ms")
    end
    assert_equal theirs, mine
    held.success
    real.close
  end
end
