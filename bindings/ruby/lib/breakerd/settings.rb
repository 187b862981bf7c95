module Breakerd
  # Breaker settings: the Ruby keyword names and their brk_config members
  # (every setting of docs/design/semantics.md's table).
  module Settings
    TABLE = {
      failure_threshold: ["failure_threshold", :count],
      open: ["open_ms", :duration],
      max_open: ["max_open_ms", :duration],
      half_open_probes: ["half_open_probes", :count],
      success_threshold: ["success_threshold", :count],
      probe_timeout: ["probe_timeout_ms", :duration],
      max_wait: ["max_wait_ms", :duration],
      max_concurrent: ["max_concurrent", :count],
      # a bulkhead limit learned from latency by every process of the host
      # (docs/design/limits.md "Adaptive concurrency"), between
      # min_concurrent and max_concurrent (0: Breakerd::LIMITS's); the C
      # fields as they are: no "auto" string to parse
      concurrency_auto: ["concurrency_auto", :bool],
      min_concurrent: ["min_concurrent", :count],
      failure_rate: ["failure_rate_pct", :pct],
      window: ["window_ms", :duration],
      min_calls: ["min_calls", :count],
      slow_call: ["slow_call_ms", :duration_or_nil],
      slow_rate: ["slow_rate_pct", :pct],
      min_distinct_processes: ["min_distinct_processes", :count],
      reserve_pct: ["reserve_pct", :count],
      hold_histogram: ["hold_histogram", :bool],
      fleet: ["fleet", :bool],
      fleet_probe: ["fleet_probe", :bool],
      implicit_pace: ["implicit_pace", :bool]
    }.freeze
    BY_FIELD = TABLE.to_h { |k, (f, _)| [f, k] }.freeze

    RULES = {
      "failure_threshold" => -> { "must be 1..#{LIMITS['failure_threshold']}" },
      "success_threshold" => -> { "must be 1..#{LIMITS['success_threshold']}" },
      "half_open_probes" => -> { "must be 1..#{LIMITS['half_open_probes']}" },
      "max_concurrent" => -> { "must be 0 (no bulkhead) ..#{LIMITS['max_concurrent']}" },
      "min_concurrent" => lambda {
        "must be 1..max_concurrent (#{LIMITS['max_concurrent']} when 0) with concurrency_auto: true"
      },
      "min_calls" => -> { "must be 0..#{LIMITS['min_calls']}" },
      "min_distinct_processes" => -> { "must be 0 or 1 (off), or 2..#{LIMITS['min_distinct_processes']}" },
      "reserve_pct" => -> { "must be 0..#{LIMITS['reserve_pct']}" },
      "max_open_ms" => -> { "must be at least open (the first cooling period)" },
      "open_ms" => -> { "must be at least 1 ms" },
      "probe_timeout_ms" => -> { "must be at least 1 ms" },
      "window_ms" => -> { "must be at least 1 ms" },
      "slow_rate_pct" => -> { "must be 1..100 when slow_call is set (both, or neither)" },
      "slow_call_ms" => -> { "must be set together with slow_rate" },
      "failure_rate_pct" => -> { "must be 1..100, or nil (off)" }
    }.freeze

    module_function

    # Validate +settings+ (Ruby names) and return {brk_config member =>
    # Integer}; TypeError/ArgumentError name the setting.
    def to_config(settings)
      settings.each_with_object({}) do |(name, value), out|
        field, kind = TABLE[name.to_sym]
        raise ArgumentError, "unknown setting #{name.inspect} (known: #{TABLE.keys.join(', ')})" unless field

        out[field] = convert(name, kind, value)
      end
    end

    def convert(name, kind, value)
      case kind
      when :count
        if name.to_sym == :max_concurrent && value.is_a?(String)
          raise TypeError, "max_concurrent must be an Integer, not String #{value.inspect} " \
                           "(a learned limit: concurrency_auto: true, max_concurrent: N, 0 for #{LIMITS['max_concurrent']})"
        end
        raise TypeError, "#{name} must be an Integer, not #{value.class}" unless value.is_a?(Integer)
        raise ArgumentError, "#{name} must not be negative, not #{value}" if value.negative?

        value
      when :bool
        raise TypeError, "#{name} must be true or false, not #{value.class}" unless [true, false].include?(value)

        value ? 1 : 0
      when :pct
        return 0 if value.nil?
        raise TypeError, "#{name} must be a percentage (1..100) or nil, not #{value.class}" unless value.is_a?(Numeric)
        raise ArgumentError, "#{name} must be a percentage 1..100 (50 = half) or nil, not #{value}" unless (1..100).cover?(value)

        value.round
      when :duration
        raise TypeError, "#{name} must be a duration, not nil" if value.nil?

        Durations.to_ms(value, name)
      else
        Durations.to_ms(value, name, none_ok: true) || 0
      end
    end

    # Raise ArgumentError naming the first bad setting of +config+ (the
    # defaults plus it, by brk_config_validate()).
    def check(config, given)
      bad = Breakerd._config_check(config)
      return unless bad

      name = BY_FIELD.fetch(bad, bad.to_sym)
      shown = given.key?(name) ? "#{name}=#{given[name].inspect}" : name.to_s
      rule = RULES[bad]
      raise ArgumentError, "bad setting #{shown}: #{rule ? rule.call : 'out of range'}"
    end
  end
end
