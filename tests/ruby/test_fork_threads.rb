require_relative "helper"

# Fork safety (Puma's preload_app!: a child never inherits its parent's
# leases) and threads (each permit is its own object; the library is
# lock-free).
class TestForkThreads < Minitest::Test
  include BrkTest

  def test_child_sees_the_parents_state
    br = @seg.breaker("f/a", failure_threshold: 2, open: "1h", max_open: "2h")
    fail_times(br, 2)
    got = in_child do
      br.call { 1 }
      "admitted"
    rescue Breakerd::CircuitOpen => e
      [br.state.to_s, e.cause]
    end
    assert_equal %w[open open], got
  end

  def test_child_cannot_release_the_parents_permit
    br = @seg.breaker("f/b", max_concurrent: 2)
    p = br.acquire
    got = in_child do
      r = [p.failure, p.success]
      GC.start # collecting the copy in the child releases nothing either
      r + [br.info["in_flight"]]
    end
    assert_equal [false, false, 1], got
    assert_equal 1, br.info["in_flight"]
    assert_equal 0, br.info["counters"]["failures"]
    assert_equal true, p.success
  end

  def test_a_child_trips_it_for_the_parent
    br = @seg.breaker("f/c", failure_threshold: 3)
    in_child { fail_times(br, 3); br.state.to_s }
    assert_equal :open, br.state
  end

  def test_threads_share_one_bulkhead_and_lose_no_count
    br = @seg.breaker("f/d", max_concurrent: 4)
    inside = 0
    peak = 0
    lock = Mutex.new
    refused = 0
    threads = Array.new(8) do
      Thread.new do
        500.times do
          br.call do
            lock.synchronize { inside += 1; peak = [peak, inside].max }
            Thread.pass
            lock.synchronize { inside -= 1 }
          end
        rescue Breakerd::BulkheadFull
          lock.synchronize { refused += 1 }
        end
      end
    end
    threads.each(&:join)
    c = br.info["counters"]
    assert_operator peak, :<=, 4
    assert_equal 4000, c["successes"] + c["rejected_full"]
    assert_equal refused, c["rejected_full"]
    assert_equal 0, br.info["in_flight"]
  end
end
