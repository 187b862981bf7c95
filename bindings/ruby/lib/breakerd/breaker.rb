module Breakerd
  # A host-wide circuit breaker (Segment#breaker). Every process naming it
  # in the same segment shares one state, one set of leases and one event
  # ring.
  #
  #   br.call { http.get(...) }               # an exception is a failure
  #   br.acquire { |permit| permit.report_http(res.code.to_i, res) }
  #   permit = br.acquire; ...; permit.success
  class Breaker
    attr_reader :segment

    # call(exclude: nil, ignore: nil) { ... } -> the block's value.
    # Run the block under a permit and report it on every path: a return
    # (break, throw, a return from the method) is a success, an exception
    # is classified (Classify.outcome_of) by +exclude:+ / +ignore:+ (this
    # call's, else the breaker's) and re-raised. Raises a Refused subclass
    # without running the block. Without keywords it is C (rb_breaker.c): the
    # permit stays on the C stack; only an exception comes back to Ruby
    # (#_report_exception) to be classified.
    def _call_slow(exclude: nil, ignore: nil)
      permit = _acquire
      guard(permit, exclude, ignore) { yield }
    end

    # Without a block: the Permit (report it yourself, exactly once). With
    # a block: yields the permit; if the block does not report it, a return
    # is a success and an exception is classified as for #call.
    def acquire(exclude: nil, ignore: nil, &block)
      permit = _acquire
      return permit unless block

      guard(permit, exclude, ignore) { block.call(permit) }
    end

    # Force open for +duration+ (seconds or "30s"); false if already open.
    def trip(duration = 60)
      ms = Durations.to_ms(duration, "duration")
      raise ArgumentError, "duration must be at least 1 ms" if ms.zero?

      _trip(ms)
    end

    def force_open
      _set_mode(MODE_FORCED_OPEN)
    end

    def disable
      _set_mode(MODE_DISABLED)
    end

    def metrics_only
      _set_mode(MODE_METRICS_ONLY)
    end

    # Back to normal mode (without resetting the state machine).
    def normal
      _set_mode(MODE_NORMAL)
    end

    # Change the given settings of the record (state and counters kept);
    # the others keep their stored values.
    def configure(**settings)
      cfg = Settings.to_config(settings)
      full = info["config"].transform_values { |v| v == true ? 1 : (v == false ? 0 : v) }.merge(cfg)
      Settings.check(full, settings)
      bad = _update(cfg)
      Settings.check({ bad => 0 }, settings) if bad
      nil
    end

    def inspect
      "#<Breakerd::Breaker #{name} #{state}>"
    end

    private

    def setup(segment, failure, exclude, ignore)
      @segment = segment
      @failure = failure
      @exclude = exclude
      @ignore = ignore
      self
    end

    def guard(permit, exclude, ignore)
      yield
    rescue Exception => e # rubocop:disable Lint/RescueException
      _report_exception(permit, e, exclude, ignore)
      raise
    ensure
      permit.__send__(:_release, SUCCESS, REASON_NONE, 0) unless permit.released?
    end

    # Report +permit+ of a block left by +exc+ (unless the block did).
    def _report_exception(permit, exc, exclude = nil, ignore = nil)
      return if permit.released?

      o, r = Classify.outcome_of(exc, @failure,
                                 exclude.nil? ? @exclude : Classify.matcher(exclude, "exclude"),
                                 ignore.nil? ? @ignore : Classify.matcher(ignore, "ignore"))
      permit.__send__(:_release, o, r, 0)
    end
  end
end
