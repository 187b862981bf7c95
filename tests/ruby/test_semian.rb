require_relative "helper"
require "socket"
require "breakerd/semian/net_http"

# The Semian facade (breakerd/semian) and its Net::HTTP adapter.
class TestSemian < Minitest::Test
  include BrkTest

  def setup
    super
    Semian.segment = @seg
    Semian.reset!
  end

  def teardown
    Semian.reset!
    Semian.segment = nil
    Semian::NetHTTP.reset_semian_configuration!
    super
  end

  def test_register_maps_the_options
    Semian.register(:pay, bulkhead: true, tickets: 2, circuit_breaker: true, error_threshold: 3,
                          error_timeout: 10, success_threshold: 2, exceptions: [IOError])
    cfg = Semian[:pay].breaker.info["config"]
    want = { "max_concurrent" => 2, "failure_threshold" => 3, "open_ms" => 10_000,
             "max_open_ms" => 10_000, "success_threshold" => 2 }
    assert_equal want, cfg.slice(*want.keys)
  end

  def test_exceptions_open_the_circuit_other_errors_count_neither_way
    r = Semian.register(:db, bulkhead: false, error_threshold: 2, error_timeout: 5,
                             success_threshold: 1, exceptions: [IOError])
    assert_equal :ok, r.acquire { :ok }
    assert_raises(ArgumentError) { r.acquire { raise ArgumentError } }
    2.times { assert_raises(IOError) { r.acquire { raise IOError } } }
    assert r.open?
    assert_raises(Semian::OpenCircuitError) { r.acquire { :never } }
    c = r.breaker.info["counters"]
    assert_equal [1, 2, 1], [c["successes"], c["failures"], c["ignored"]]
    @clock.advance(5)
    r.acquire { :probe }
    assert r.closed?
  end

  def test_tickets_are_a_host_wide_bulkhead
    r = Semian.register(:svc, tickets: 1, error_threshold: 2, error_timeout: 5, success_threshold: 1)
    r.acquire do
      assert_raises(Semian::ResourceBusyError) { r.acquire { 1 } }
      assert_raises(Semian::TimeoutError) { r.acquire { 1 } }
      assert_equal 1, r.count
    end
  end

  def test_options_that_do_not_map
    e = assert_raises(ArgumentError) { Semian.register(:q, quota: 0.5, error_threshold: 1, error_timeout: 1, success_threshold: 1) }
    assert_includes e.message, "quota"
    assert_raises(ArgumentError) { Semian.register(:q, bulkhead: true, error_threshold: 1, error_timeout: 1, success_threshold: 1) }
    assert_raises(ArgumentError) { Semian.register(:q, bulkhead: false, error_threshold: 1) }
    Semian.logger = Logger.new(log = StringIO.new)
    Semian.register(:q, bulkhead: false, error_threshold: 1, error_timeout: 1, success_threshold: 1,
                        half_open_resource_timeout: 1, lumping_interval: 2)
    assert_includes log.string, "half_open_resource_timeout"
  ensure
    Semian.logger = nil
  end

  def test_breakerd_settings_pass_through
    r = Semian.register(:x, bulkhead: false, error_threshold: 1, error_timeout: 8, success_threshold: 1,
                            breakerd: { probe_timeout: "2s", half_open_probes: 2 })
    assert_equal [2000, 2], r.breaker.info["config"].values_at("probe_timeout_ms", "half_open_probes")
    assert_raises(ArgumentError) { Semian.register(:y, bulkhead: false, error_threshold: 1, error_timeout: 8, success_threshold: 1, breakerd: { nope: 1 }) }
  end

  def test_exponential_backoff
    r = Semian.register(:exp, bulkhead: false, error_threshold: 1, error_timeout: 8, success_threshold: 1,
                              exponential_backoff_error_timeout: true, exponential_backoff_initial_timeout: 1)
    assert_equal [1000, 8000], r.breaker.info["config"].values_at("open_ms", "max_open_ms")
  end

  # A tiny HTTP/1.1 server on loopback answering each request with the
  # next canned status (and Retry-After), then closing.
  def serve(answers)
    server = TCPServer.new("127.0.0.1", 0)
    thread = Thread.new do
      answers.each do |status, retry_after|
        c = server.accept
        c.gets("\r\n\r\n")
        extra = retry_after ? "Retry-After: #{retry_after}\r\n" : ""
        c.write("HTTP/1.1 #{status} X\r\nContent-Length: 0\r\n#{extra}Connection: close\r\n\r\n")
        c.close
      end
    end
    [server, thread]
  end

  # A 429 with Retry-After: by default the breaker's implicit pace takes
  # it (throttled, not a failure, no cool-until; the next call waits for
  # the pace's token); with implicit_pace off it is a rate_limited failure
  # whose Retry-After cools every caller.
  def test_net_http_adapter_classifies_responses
    server, thread = serve([[200], [500], [429, "5"]])
    port = server.addr[1]
    off_server, off_thread = serve([[429, "5"]])
    off_port = off_server.addr[1]
    Semian::NetHTTP.semian_configuration = proc do |host, p|
      next unless host == "127.0.0.1"

      if p == off_port
        { name: "up_off", tickets: 2, error_threshold: 3, error_timeout: 10, success_threshold: 1,
          breakerd: { implicit_pace: false } }
      else
        { name: "up", tickets: 2, error_threshold: 3, error_timeout: 10, success_threshold: 1 }
      end
    end
    get = -> { Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/")) }
    assert_equal "200", get.call.code
    assert_equal "500", get.call.code
    assert_equal "429", get.call.code
    e = assert_raises(Net::CircuitOpenError) { get.call }
    assert_match(/paced/, e.message)
    info = Semian["nethttp_up"].breaker.info
    assert_equal [1, 1, 1], [info["counters"]["successes"], info["counters"]["failures"], info["counters"]["throttled"]]
    assert_equal 0, info["counters"]["failures_by_reason"]["rate_limited"]
    assert_equal 0, info["cool_until_remaining_ms"]
    assert_operator info["implicit_pace_per_s"], :>, 0
    thread.join
    server.close

    get_off = -> { Net::HTTP.get_response(URI("http://127.0.0.1:#{off_port}/")) }
    assert_equal "429", get_off.call.code
    e = assert_raises(Net::CircuitOpenError) { get_off.call }
    assert_match(/cooling/, e.message)
    info = Semian["nethttp_up_off"].breaker.info
    assert_equal [1, 1], [info["counters"]["failures"], info["counters"]["failures_by_reason"]["rate_limited"]]
    assert_equal 5000, info["cool_until_remaining_ms"]
    assert_nil info["implicit_pace_per_s"]
    off_thread.join
    off_server.close
  end

  def test_net_http_connection_refused_is_a_failure
    server = TCPServer.new("127.0.0.1", 0)
    port = server.addr[1]
    server.close
    Semian::NetHTTP.semian_configuration = proc { |_, _| { name: "down", bulkhead: false, error_threshold: 2, error_timeout: 10, success_threshold: 1 } }
    2.times { assert_raises(Errno::ECONNREFUSED) { Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/")) } }
    assert_raises(Net::CircuitOpenError) { Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/")) }
    assert_equal 2, Semian["nethttp_down"].breaker.info["counters"]["failures_by_reason"]["connect"]
  end
end
