# Shared by the Ruby unit tests (tests/ruby/test_*.rb, Debian's
# ruby-minitest): a private segment per test (/brkrb-<pid>-<n>, unlinked
# afterwards), on the fake clock unless a test needs the real one.
require "json"
require "timeout"
require "minitest/autorun"
require "breakerd"

module BrkTest
  @counter = 0
  def self.next_shm
    @counter += 1
    "/brkrb-#{Process.pid}-#{@counter}"
  end

  def setup
    @shm = BrkTest.next_shm
    @clock = Breakerd::Testing::FakeClock.new
    @seg = Breakerd.attach(shm: @shm, clock: @clock)
  end

  def teardown
    @seg&.close
    Breakerd.unlink(@shm)
  end

  def fail_times(br, n, exc = IOError)
    n.times do
      br.call { raise exc, "down" }
    rescue exc
      nil
    end
  end

  def bctl_json(*args)
    bctl = ENV.fetch("BRKRB_BCTL", nil)
    skip "no bctl (BRKRB_BCTL)" unless bctl && File.executable?(bctl)
    out = IO.popen([bctl, "--shm", @shm, *args, "--json"], &:read)
    raise "bctl #{args.join(' ')} failed" unless $?.success?

    JSON.parse(out)
  end

  # Run the block in a fork()ed child; its value (JSON) comes back.
  def in_child
    r, w = IO.pipe
    pid = fork do
      r.close
      out = begin
        { "ok" => yield }
      rescue Exception => e # rubocop:disable Lint/RescueException
        { "error" => "#{e.class}: #{e.message}" }
      end
      w.write(JSON.generate(out))
      w.close
      exit!(0)
    end
    w.close
    data = r.read
    r.close
    Process.wait(pid)
    out = JSON.parse(data)
    raise out["error"] if out.key?("error")

    out["ok"]
  end
end
