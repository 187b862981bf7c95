module Breakerd
  # A host-wide GCRA rate limit (Segment#bucket).
  class Bucket
    # Take +n+ tokens, or raise NoTokens (#wait: when to try again).
    def take(n = 1)
      wait = _take(n)
      raise NoTokens.new(wait: wait, cause: "no_tokens", breaker: name) if wait.positive?

      true
    end

    # 0.0 if taken, else the seconds to wait (jittered).
    def try_take(n = 1)
      _take(n)
    end

    def configure(rate:, burst:)
      _configure(rate, burst)
    end

    def inspect
      "#<Breakerd::Bucket #{name}>"
    end
  end

  # A host-wide retry budget (Finagle's; Segment#budget): #deposit for
  # every first attempt, #retry before every retry (raises RetryDeferred
  # when the budget is spent: give the work back, do not sleep on it).
  class Budget
    # true if a retry may go now (the token is spent), else false.
    def try_retry
      self.retry
    rescue RetryDeferred
      false
    end

    def inspect
      "#<Breakerd::Budget #{name}>"
    end
  end

  # One request's slot at a pace's rate (Pace#take). Report how the upstream
  # answered, once.
  class PaceToken
    attr_reader :pace, :taken_at, :waited, :cut

    def initialize(pace, taken_at, waited)
      @pace = pace
      @taken_at = taken_at
      @waited = waited
      @reported = false
      @cut = nil
    end

    def reported?
      @reported
    end

    # report(429, headers) or report(outcome: :failure, reason: :rate_limited);
    # true if this report cut the shared rate.
    def report(status = nil, headers = nil, outcome: nil, reason: :none, retry_after: nil)
      raise Error, "#{pace.name}: this token was already reported" if @reported

      @cut = pace.report(taken_at, status, headers, outcome: outcome, reason: reason,
                                                     retry_after: retry_after)
      @reported = true
      @cut
    end
  end

  # A host-wide learned rate (a GCRA bucket in paced mode, Segment#pace):
  # it starts at +ceiling+, each rate-limit answer reported to it (a 429,
  # or a 503/529 with a Retry-After) cuts the rate for every process, and
  # it grows back along the CUBIC curve towards the ceiling.
  class Pace
    PRIORITIES = { normal: PRIORITY_NORMAL, high: PRIORITY_HIGH }.freeze

    # A PaceToken, sleeping up to +wait+ (seconds or "250ms"; 0: never) for
    # a slot reserved in arrival order across processes (a fair wait, the
    # library's brk_pace_reserve); a slot past +wait+ raises NoTokens at
    # once. On a segment with a FakeClock it never sleeps.
    def take(priority: :normal, wait: 0)
      prio = PRIORITIES.fetch(priority) do
        raise ArgumentError, "priority must be :normal or :high, not #{priority.inspect}"
      end
      at, waited = _take_wait(prio, Durations.to_ms(wait, "wait"), segment_fake_clock?)
      PaceToken.new(self, at, waited)
    end

    # Tell the pace how the request taken at +taken_at+ was answered: an
    # HTTP +status+ (Retry-After from +headers+) or an +outcome:+ and
    # +reason:+. true if this report cut the rate.
    def report(taken_at, status = nil, headers = nil, outcome: nil, reason: :none, retry_after: nil)
      raise TypeError, "taken_at must be an Integer (ns)" unless taken_at.is_a?(Integer)
      raise ArgumentError, "give exactly one of status or outcome:" if status.nil? == outcome.nil?

      ms = retry_after.nil? ? nil : Durations.to_ms(retry_after, "retry_after")
      if status
        o, r, hms = Classify.http(status, headers)
        return _report(taken_at, PACE_IGNORE, 0) if o.zero?

        ms ||= hms
      else
        o = Classify::OUTCOMES.fetch(outcome.to_sym) { raise ArgumentError, "unknown outcome #{outcome.inspect}" }
        r = Classify.reason_code(reason)
      end
      ms ||= 0
      _report(taken_at, Breakerd._pace_signal_of(o, r, ms), ms)
    end

    def inspect
      "#<Breakerd::Pace #{name}>"
    end

    private

    attr_accessor :segment_fake_clock

    def segment_fake_clock?
      @segment_fake_clock
    end
  end
end
