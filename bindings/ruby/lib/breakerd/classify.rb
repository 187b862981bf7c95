module Breakerd
  # How an exception raised inside br.call { } / br.acquire { } is counted,
  # and how an HTTP answer is classified (by the library's
  # brk_http_classify()).
  module Classify
    OUTCOMES = {
      success: SUCCESS, failure: FAILURE, healthy_error: HEALTHY_ERROR,
      rejected_request: REJECTED_REQUEST, cancelled: CANCELLED, throttled: THROTTLED
    }.freeze
    OUTCOME_NAMES = OUTCOMES.invert.freeze
    REASONS = {
      none: REASON_NONE, timeout: REASON_TIMEOUT, connect: REASON_CONNECT,
      server_error: REASON_SERVER_ERROR, overloaded: REASON_OVERLOADED,
      rate_limited: REASON_RATE_LIMITED, other: REASON_OTHER
    }.freeze
    REASON_NAMES = REASONS.invert.freeze

    # Errors that say the upstream did not answer in time / could not be
    # reached (names, so that Net::HTTP need not be loaded).
    TIMEOUT_ERRORS = %w[Timeout::Error Errno::ETIMEDOUT Net::OpenTimeout Net::ReadTimeout
                        Net::WriteTimeout].freeze
    CONNECT_ERRORS = %w[Errno::ECONNREFUSED Errno::ECONNRESET Errno::EHOSTUNREACH
                        Errno::ENETUNREACH Errno::EPIPE Errno::ECONNABORTED SocketError
                        EOFError].freeze

    module_function

    def reason_code(reason)
      REASONS.fetch(reason.is_a?(String) ? reason.to_sym : reason) do
        raise ArgumentError, "reason must be one of #{REASONS.keys.join(', ')}, not #{reason.inspect}"
      end
    end

    # A matcher: nil, an exception class (or module), a Proc (exc -> bool),
    # or an Array of them. Checked when given, so a typo fails at once.
    def matcher(spec, argname)
      list = spec.nil? ? [] : Array(spec)
      list.each do |m|
        next if m.is_a?(Module) || m.respond_to?(:call)

        raise TypeError, "#{argname}: #{m.inspect} is neither an exception class nor a callable"
      end
      list.freeze
    end

    def match?(list, exc)
      list.any? { |m| m.is_a?(Module) ? exc.is_a?(m) : m.call(exc) }
    end

    def class_in?(exc, names)
      exc.class.ancestors.any? { |a| names.include?(a.name) }
    end

    def reason_of(exc)
      return REASON_TIMEOUT if class_in?(exc, TIMEOUT_ERRORS)
      return REASON_CONNECT if class_in?(exc, CONNECT_ERRORS)

      REASON_OTHER
    end

    # [outcome, reason] of an exception that left the block. A refusal
    # (of this or another breaker) and an Exception that is not a
    # StandardError (Interrupt, SystemExit, a killed thread) mean we gave
    # up locally: cancelled. Then +ignore+ -> rejected_request (counted
    # neither way), +exclude+ -> healthy_error (counts as success),
    # +failure+ (default StandardError) -> failure with the reason the
    # exception suggests; a StandardError matched by none: healthy_error.
    def outcome_of(exc, failure, exclude, ignore)
      return [CANCELLED, REASON_NONE] if exc.is_a?(Refused)
      return [REJECTED_REQUEST, REASON_NONE] if match?(ignore, exc)
      return [HEALTHY_ERROR, REASON_NONE] if match?(exclude, exc)
      return [CANCELLED, REASON_NONE] unless exc.is_a?(StandardError)
      return [FAILURE, reason_of(exc)] if match?(failure, exc)

      [HEALTHY_ERROR, REASON_NONE]
    end

    # A header's value from a Hash (case-insensitively) or anything with
    # #[] (Net::HTTPResponse, Rack headers); nil if absent.
    def header(headers, name)
      return nil if headers.nil?
      unless headers.respond_to?(:[])
        raise TypeError, "headers must be a Hash or respond to #[], not #{headers.class}"
      end

      v = headers[name]
      if v.nil? && headers.is_a?(Hash)
        low = name.downcase
        headers.each { |k, val| (v = val) && break if k.to_s.downcase == low }
      end
      v = v.first if v.is_a?(Array)
      v&.to_s
    end

    # [outcome, reason, retry_after_ms] of an HTTP answer; outcome 0: no
    # verdict (status 0 and no sign in the text).
    def http(status, headers = nil, body = nil)
      raise TypeError, "status must be an Integer, not #{status.class}" unless status.is_a?(Integer)

      Breakerd._http_classify(status, header(headers, "Retry-After"), body&.to_s)
    end
  end

  # [outcome, reason, retry_after (s) or nil] of an HTTP response, by the
  # library's table: 1xx-3xx success; 404 healthy_error; 408, 504
  # failure/timeout; 429 failure/rate_limited; other 4xx rejected_request;
  # 503, 529 failure/overloaded; other 5xx failure/server_error.
  def self.classify_http(status, headers = nil, body = nil)
    o, r, ms = Classify.http(status, headers, body)
    [Classify::OUTCOME_NAMES[o], Classify::REASON_NAMES.fetch(r, :other), ms.positive? ? ms / 1000.0 : nil]
  end
end
