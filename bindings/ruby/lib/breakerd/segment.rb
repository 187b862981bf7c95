module Breakerd
  # The shared segment (Breakerd.attach). Breakers, buckets, budgets and
  # paces made from it keep it mapped: #close makes every later call raise
  # and the mapping goes when the last of them is collected.
  class Segment
    attr_reader :shm, :clock

    def initialize(shm: nil, capacity: nil, readonly: false, clock: nil)
      unless clock.nil? || clock.is_a?(Testing::FakeClock)
        raise TypeError, "clock must be a Breakerd::Testing::FakeClock or nil, not #{clock.class}"
      end
      raise TypeError, "shm must be a String or nil, not #{shm.class}" unless shm.nil? || shm.is_a?(String)

      @shm = Breakerd.resolve_shm_name(shm)
      @clock = clock
      _attach(shm, capacity, readonly, clock)
    end

    # Get or create the breaker +name+; +settings+ (keywords of the defaults
    # table: failure_threshold:, open: "2s", max_open:, half_open_probes:,
    # success_threshold:, probe_timeout:, max_wait:, max_concurrent:,
    # failure_rate:, window:, min_calls:, slow_call:, slow_rate:,
    # min_distinct_processes:, reserve_pct:, hold_histogram:, fleet:,
    # fleet_probe:, implicit_pace:) are used only if this call creates it. +failure:+
    # (default StandardError), +exclude:+ and +ignore:+ classify the
    # exceptions of #call / #acquire blocks. Everything is checked before
    # the segment is touched.
    def breaker(name, failure: StandardError, exclude: nil, ignore: nil, **settings)
      raise TypeError, "name must be a String, not #{name.class}" unless name.is_a?(String)

      f = Classify.matcher(failure, "failure")
      e = Classify.matcher(exclude, "exclude")
      i = Classify.matcher(ignore, "ignore")
      cfg = Settings.to_config(settings)
      Settings.check(cfg, settings)
      _breaker(name, cfg).__send__(:setup, self, f, e, i)
    end

    def bucket(name, rate:, burst:)
      _bucket(name, rate, burst)
    end

    def budget(name, floor: 10.0, ratio: 0.2)
      _budget(name, floor, ratio)
    end

    def pace(name, ceiling:, floor: nil, burst: nil, reserve_pct: nil)
      k = _pace(name, ceiling, floor, burst, reserve_pct)
      k.__send__(:segment_fake_clock=, !@clock.nil?)
      k
    end

    # [events, next_cursor]: the events with sequence >= +cursor+ still in
    # the ring, oldest first, as Hashes (seq, wall_ms, name, from, to,
    # reason, pid, value, origin). Pass next_cursor to the next call.
    def events(cursor = 0)
      evs, nxt, lost = _events(cursor)
      @lost_events = (@lost_events || 0) + lost
      [evs, nxt]
    end

    def lost_events
      @lost_events || 0
    end

    def inspect
      "#<Breakerd::Segment #{shm}#{closed? ? ' closed' : ''}>"
    end
  end
end
