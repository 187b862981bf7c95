module Breakerd
  module Testing
    # A monotonic clock for unit tests: Breakerd.attach(clock: c). Its value
    # lives in C (a uint64 the library reads directly, with no Ruby call and
    # no GVL), so it only moves when #advance is called.
    class FakeClock
      def initialize(start = 1000.0)
        raise TypeError, "start must be a Numeric" unless start.is_a?(Numeric)

        _set_ns((start * 1e9).round)
      end

      # Move forward by +seconds+ (a number, or a duration string such as
      # "250ms"); the clock never goes back.
      def advance(seconds)
        ns = if seconds.is_a?(String)
               Durations.to_ms(seconds, "seconds") * 1_000_000
             else
               raise TypeError, "seconds must be a Numeric or a duration String" unless seconds.is_a?(Numeric)
               raise ArgumentError, "a FakeClock never goes back: seconds must be >= 0" if seconds.negative?

               (seconds * 1e9).round
             end
        _advance_ns(ns)
      end

      def now
        now_ns / 1e9
      end
    end
  end
end
