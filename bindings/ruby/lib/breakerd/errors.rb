module Breakerd
  # A segment or system error: #code is the library's code (an errno value,
  # or a BRK_E* code above the errno range), the message the library's.
  class Error < StandardError
    attr_reader :code
  end

  # The call was not admitted: do not call the upstream now.
  #
  # #wait: seconds to wait before trying again (Float, jittered per caller;
  # 0.0 when unknown: forced open, bulkhead full); #cause: "open",
  # "probes_busy", "forced_open", "cooling", "bulkhead_full", "no_tokens",
  # "deferred" or "contended"; #breaker: the name of the record that
  # refused (this one or an ancestor); #code: the library's stable
  # admission code ("BREAKER_OPEN", "COOLING", "BULKHEAD_FULL",
  # "RATE_LIMITED", "DEFERRED", "CONTENDED").
  #
  # #cause shadows Exception#cause (the exception being handled when this
  # one was raised): that one stays readable as #__cause__.
  class Refused < StandardError
    CODES = {
      "open" => "BREAKER_OPEN", "probes_busy" => "BREAKER_OPEN", "forced_open" => "BREAKER_OPEN",
      "cooling" => "COOLING", "bulkhead_full" => "BULKHEAD_FULL", "deferred" => "DEFERRED",
      "no_tokens" => "RATE_LIMITED", "contended" => "CONTENDED"
    }.freeze

    attr_reader :wait, :breaker, :code

    def initialize(message = nil, wait: 0.0, cause: "open", breaker: "")
      @wait = Float(wait)
      @refusal_cause = cause.to_s
      @breaker = breaker.to_s
      @code = CODES.fetch(@refusal_cause, "BREAKER_OPEN")
      super(message || format("%s: refused (%s), retry in %.3f s", @breaker, @refusal_cause, @wait))
    end

    alias __cause__ cause

    def cause
      @refusal_cause
    end
  end

  # Open, half-open with every probe slot taken, forced open, or contended.
  class CircuitOpen < Refused; end
  # A shared cool-until (from a Retry-After) is running.
  class Cooling < Refused; end
  # max_concurrent permits are out across all processes.
  class BulkheadFull < Refused; end
  # The GCRA bucket or pace has too few tokens now; #wait says when.
  class NoTokens < Refused; end
  # The retry budget is exhausted: give the work back, do not sleep on it.
  class RetryDeferred < Refused; end
end
