# bench/ruby/bench.rb [--redis-port PORT] [--runs N] [--quick]
#
# br.call { } on a closed breaker from Ruby (the breakerd gem), side by side
# in one run with the designs Ruby users pick today:
#   (a) Semian's circuit design, in process (Semian::CircuitBreaker: state,
#       a sliding window of error times of size error_threshold, a success
#       counter, half-open by error_timeout), every call's bookkeeping
#       (the entry check and the outcome) under one Mutex, as a breaker
#       shared by a Puma worker's threads must be; and the same as Semian
#       ships it (ThreadSafe implementation: no lock on the success path);
#   (b) a Redis-backed shared breaker in circuitbox's design (Moneta store
#       over ruby-redis): per successful call EXISTS of the open flag,
#       INCRBY + EXPIRE of the time-aligned success counter, EXISTS of the
#       half-open flag: four round trips over loopback TCP.
# Then 8 forked processes hammer ONE breakerd breaker and the segment's
# counters must add up exactly to the calls made (no lost update).
#
# Prints median ns per call of --runs runs [min - max], calls/s, the cost
# relative to breakerd, and GOAL lines; exit 0 if every goal is met, 3 if
# one is missed, 1 on error. Run through bench/ruby/run.sh.
require "breakerd"
require "optparse"

opts = { runs: 5, redis_port: nil, quick: false }
OptionParser.new do |o|
  o.on("--redis-port PORT", Integer) { |v| opts[:redis_port] = v }
  o.on("--runs N", Integer) { |v| opts[:runs] = v }
  o.on("--quick") { opts[:quick] = true }
end.parse!

CALLS = opts[:quick] ? 20_000 : 300_000
REDIS_CALLS = opts[:quick] ? 500 : 5_000
PROC_CALLS = opts[:quick] ? 10_000 : 200_000
NPROC = 8

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

# ns per call of +n+ calls of the block (one warm-up run of n / 10 first).
def per_call(n)
  (n / 10).times { yield }
  t = now
  i = 0
  while i < n
    yield
    i += 1
  end
  (now - t) / n * 1e9
end

# ---- (a) Semian's circuit design, in process --------------------------------

class SemianDesignBreaker
  OpenCircuitError = Class.new(StandardError)

  def initialize(error_threshold:, error_timeout:, success_threshold:, exceptions:, lock:)
    @error_threshold = error_threshold
    @error_timeout = error_timeout
    @success_threshold = success_threshold
    @exceptions = exceptions
    @lock = lock
    @errors = [] # error times, at most error_threshold (SlidingWindow)
    @successes = 0
    @state = :closed
  end

  def acquire
    synchronize do
      transition_to_half_open if transition_to_half_open?
      raise OpenCircuitError unless request_allowed?
    end
    begin
      result = yield
    rescue *@exceptions => e
      synchronize { mark_failed(e) }
      raise
    end
    synchronize { mark_success }
    result
  end

  private

  def synchronize(&block)
    @lock ? @lock.synchronize(&block) : yield
  end

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def transition_to_half_open?
    @state == :open && error_timeout_expired?
  end

  def request_allowed?
    @state == :closed || @state == :half_open || transition_to_half_open?
  end

  def error_timeout_expired?
    last = @errors.last
    !last || last + @error_timeout < now
  end

  def mark_failed(_error)
    @errors.shift if @errors.size >= @error_threshold
    @errors << now
    if @state == :closed
      @state = :open if @errors.size >= @error_threshold && @errors.first > now - @error_timeout
    elsif @state == :half_open
      @state = :open
    end
  end

  def mark_success
    return unless @state == :half_open

    @successes += 1
    return unless @successes >= @success_threshold

    @state = :closed
    @errors.clear
  end

  def transition_to_half_open
    @state = :half_open
    @successes = 0
  end
end

# ---- (b) circuitbox's design over Redis --------------------------------------

class CircuitboxRedisBreaker
  OpenCircuitError = Class.new(StandardError)

  def initialize(redis, service, time_window: 60, sleep_window: 90)
    @redis = redis
    @open_key = "circuits:#{service}:open"
    @half_open_key = "circuits:#{service}:half_open"
    @service = service
    @time_window = time_window
    @sleep_window = sleep_window
  end

  def run
    raise OpenCircuitError if @redis.exists?(@open_key) # open?

    result = yield
    success!
    result
  end

  private

  def success!
    key = "circuits:#{@service}:success:#{Time.now.to_i / @time_window * @time_window}"
    @redis.incrby(key, 1) # Moneta's increment(key, 1, expires:)
    @redis.expire(key, @time_window)
    @redis.del(@half_open_key) if @redis.exists?(@half_open_key) # close! if half_open?
  end
end

def summary(samples)
  s = samples.sort
  [s[s.size / 2], s.first, s.last]
end

shm = "/brkbench-rb-#{Process.pid}"
seg = Breakerd.attach(shm: shm)
begin
  br = seg.breaker("bench/rb", failure_threshold: 5)
  semian_mutex = SemianDesignBreaker.new(error_threshold: 5, error_timeout: 60, success_threshold: 1,
                                         exceptions: [IOError], lock: Mutex.new)
  semian_plain = SemianDesignBreaker.new(error_threshold: 5, error_timeout: 60, success_threshold: 1,
                                         exceptions: [IOError], lock: nil)
  redis_br = nil
  if opts[:redis_port]
    require "redis"
    redis_br = CircuitboxRedisBreaker.new(Redis.new(host: "127.0.0.1", port: opts[:redis_port]), "bench")
  end

  rows = { breakerd: [], semian_mutex: [], semian_plain: [], redis: [] }
  opts[:runs].times do
    rows[:breakerd] << per_call(CALLS) { br.call { nil } }
    rows[:semian_mutex] << per_call(CALLS) { semian_mutex.acquire { nil } }
    rows[:semian_plain] << per_call(CALLS) { semian_plain.acquire { nil } }
    rows[:redis] << per_call(REDIS_CALLS) { redis_br.run { nil } } if redis_br
  end

  # 8 processes, one breaker: no lost update
  c0 = br.info["counters"]
  t = now
  pids = Array.new(NPROC) do
    fork do
      PROC_CALLS.times { br.call { nil } }
      exit!(0)
    end
  end
  ok_children = pids.all? { |pid| Process.wait2(pid)[1].success? }
  wall = now - t
  c1 = br.info["counters"]
  want = NPROC * PROC_CALLS
  got_s = c1["successes"] - c0["successes"]
  got_a = c1["allowed"] - c0["allowed"]

  med = rows.transform_values { |v| v.empty? ? nil : summary(v) }
  base = med[:breakerd][0]
  puts "Ruby #{RUBY_VERSION}, median of #{opts[:runs]} runs (ns per call on a closed breaker, [min - max])"
  puts format("%-46s %10s %19s %12s %9s", "design", "ns/call", "[min - max]", "calls/s", "vs br")
  {
    breakerd: "breakerd gem: br.call { } (host-wide)",
    semian_mutex: "Semian design, Mutex-guarded (in process)",
    semian_plain: "Semian design as shipped, no lock (in process)",
    redis: "circuitbox design on Redis (shared, 4 RTT)"
  }.each do |k, label|
    m = med[k]
    unless m
      puts format("%-46s %10s", label, "skipped (no redis-server)")
      next
    end
    puts format("%-46s %10.0f %8.0f - %8.0f %12.0f %8.2fx", label, m[0], m[1], m[2], 1e9 / m[0], m[0] / base)
  end
  puts format("%d processes x %d calls on one breaker: %.0f calls/s in all; counters +%d successes, +%d allowed (want %d)",
              NPROC, PROC_CALLS, want / wall, got_s, got_a, want)

  goals = []
  goals << ["br.call <= 1 us per call", base <= 1000]
  goals << ["breakerd <= 0.5x the Mutex-guarded in-process breaker", base <= 0.5 * med[:semian_mutex][0]]
  goals << [">= 100x faster than the Redis-backed breaker", med[:redis][0] >= 100 * base] if med[:redis]
  goals << ["8 processes, no lost update", ok_children && got_s == want && got_a == want]
  goals.each { |what, ok| puts "GOAL #{ok ? 'met' : 'MISSED'}: #{what}" }
  exit(goals.all? { |_, ok| ok } ? 0 : 3)
ensure
  seg.close
  Breakerd.unlink(shm)
end
