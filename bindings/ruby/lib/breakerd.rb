# breakerd: host-wide circuit breakers, bulkheads, GCRA rate limits and
# retry budgets shared by every process on one host (libbreaker, in a POSIX
# shared-memory segment). A Puma worker, a Python process, a C program and
# bctl naming the same breaker share one state.
#
#   require "breakerd"
#   seg = Breakerd.attach                        # $BREAKERD_SHM, else /breakerd
#   br = seg.breaker("pay/api", failure_threshold: 3, open: "2s")
#   br.call { Net::HTTP.get(uri) }               # raises Breakerd::Refused if refused
#
# Every rule is the C library's: this gem only maps Ruby's idiom onto it.
# GVL: held around acquire/release/take/deposit (a few atomics, tens of
# ns: cheaper than releasing it); released only in attach, which may wait
# for another process creating the segment.
require_relative "breakerd/version"
require_relative "breakerd/errors"
require "breakerd/breakerd_ext"
require_relative "breakerd/durations"
require_relative "breakerd/settings"
require_relative "breakerd/classify"
require_relative "breakerd/testing"
require_relative "breakerd/permit"
require_relative "breakerd/breaker"
require_relative "breakerd/limits"
require_relative "breakerd/segment"

module Breakerd
  # Attach the segment: +shm+ (else $BREAKERD_SHM, else "/breakerd"), the
  # same resolution as the C library. With a block, yields the segment and
  # closes it afterwards.
  def self.attach(shm: nil, capacity: nil, readonly: false, clock: nil)
    seg = Segment.new(shm: shm, capacity: capacity, readonly: readonly, clock: clock)
    return seg unless block_given?

    begin
      yield seg
    ensure
      seg.close
    end
  end
end
