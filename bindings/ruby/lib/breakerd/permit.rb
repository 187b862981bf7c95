module Breakerd
  # An admitted call (Breaker#acquire). Report it exactly once; each report
  # returns true if the library counted it, false if not (reported before,
  # inherited from a fork()ed parent, the breaker reset or moved to a new
  # generation since). #counted is nil until reported. A permit collected
  # unreported in its own process is released as cancelled.
  class Permit
    def success(retry_after: nil)
      _release(SUCCESS, REASON_NONE, retry_ms(retry_after))
    end

    def failure(reason: :server_error, retry_after: nil)
      _release(FAILURE, Classify.reason_code(reason), retry_ms(retry_after))
    end

    def healthy_error(retry_after: nil)
      _release(HEALTHY_ERROR, REASON_NONE, retry_ms(retry_after))
    end

    def rejected(retry_after: nil)
      _release(REJECTED_REQUEST, REASON_NONE, retry_ms(retry_after))
    end

    def cancel
      _release(CANCELLED, REASON_NONE, 0)
    end

    # Classify an HTTP answer (status, Retry-After from +headers+, +body+)
    # by the library's table and report it.
    def report_http(status, headers = nil, body = nil)
      o, r, ms = Classify.http(status, headers, body)
      raise ArgumentError, "status #{status} and the body give no verdict: report the permit yourself" if o.zero?

      _release(o, r, ms)
    end

    # The name of the breaker that admitted it.
    def breaker
      breaker_object.name
    end

    def inspect
      state = if released? then counted ? "counted" : "not counted" else "out" end
      "#<Breakerd::Permit #{breaker} #{state}>"
    end

    private

    def retry_ms(retry_after)
      retry_after.nil? ? 0 : Durations.to_ms(retry_after, "retry_after")
    end
  end
end
