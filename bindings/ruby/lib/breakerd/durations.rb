module Breakerd
  # Durations: Numeric values are seconds, Strings go through the library's
  # brk_parse_duration() ("250ms", "30s", "5m", "2h"; a bare number string
  # is an error, as in bctl).
  module Durations
    module_function

    # +value+ in whole milliseconds, rounded up; +name+ names the argument.
    def to_ms(value, name, none_ok: false)
      return nil if value.nil? && none_ok
      return Breakerd._parse_duration_ms(value, name.to_s) if value.is_a?(String)
      unless value.is_a?(Integer) || value.is_a?(Float) || value.is_a?(Rational)
        raise TypeError, "#{name} must be seconds (a Numeric) or a duration String " \
                         "such as \"250ms\", not #{value.class}"
      end
      if (value.is_a?(Float) && !value.finite?) || value.negative?
        raise ArgumentError, "#{name} must be a finite number of seconds >= 0, not #{value.inspect}"
      end
      ms = (value * 1000.0).round(6).ceil
      raise ArgumentError, "#{name}: #{value} s is longer than the largest duration" if ms > MAX_DURATION_MS
      ms
    end
  end

  # Seconds (Float) of a duration String ("250ms" -> 0.25) or number.
  def self.parse_duration(value)
    Durations.to_ms(value, "duration") / 1000.0
  end
end
