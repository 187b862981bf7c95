# The conformance runner for the Ruby gem: every scenario of the JSON files
# named on the command line, on Breakerd::Testing::FakeClock, one private
# segment per scenario. Same format and output as run_c.c (README.md).
require "json"
require "breakerd"

LANG = "ruby".freeze

class Mismatch < StandardError; end

def at_path(h, path)
  path.split(".").reduce(h) { |d, k| d.is_a?(Hash) && d.key?(k) ? d[k] : (return nil) }
end

def matches(want, got, slack = 0.0)
  num = ->(x) { x.is_a?(Numeric) }
  return num.(got) && got >= want[0] - slack && got <= want[1] + slack if want.is_a?(Array)
  return num.(got) && (want - got).abs <= slack + 1e-9 if num.(want)

  want == got
end

class Run
  def initialize(seg, clock)
    @seg = seg
    @clock = clock
    @recs = {}
    @held = {}
  end

  def record(name, spec)
    @recs[name] =
      case spec["kind"]
      when "breaker" then @seg.breaker(name, **spec.fetch("settings", {}).transform_keys(&:to_sym))
      when "bucket" then @seg.bucket(name, rate: spec["rate"], burst: spec["burst"])
      when "pace" then @seg.pace(name, ceiling: spec["ceiling"], floor: spec["floor"], burst: spec["burst"])
      when "budget" then @seg.budget(name, floor: spec["floor"], ratio: spec["ratio"])
      else raise Mismatch, "record #{name}: unknown kind #{spec['kind']}"
      end
  end

  # Run a gate call; check admitted/refused as the step says.
  def answer(st, what)
    want = st["refused"]
    begin
      got = yield
    rescue Breakerd::Refused => e
      cls = e.class.name.split("::").last
      raise Mismatch, "#{what}: #{cls}, want #{want || 'admitted'}" if cls != want
      raise Mismatch, "#{what}: cause #{e.cause}, want #{st['cause']}" if st.key?("cause") && e.cause != st["cause"]
      raise Mismatch, "#{what}: by #{e.breaker}, want #{st['by']}" if st.key?("by") && e.breaker != st["by"]
      if st.key?("wait_ms") && !matches(st["wait_ms"], e.wait * 1000.0, 1.0)
        raise Mismatch, format("%s: wait %.3f ms outside %s", what, e.wait * 1000.0, st["wait_ms"].inspect)
      end
      return nil
    end
    raise Mismatch, "#{what}: admitted, want #{want}" if want

    got
  end

  def release(st, permit)
    if st.key?("http")
      headers = st.key?("retry_after") ? { "Retry-After" => st["retry_after"] } : nil
      return permit.report_http(st["http"], headers)
    end
    ra = st["retry_after_ms"] ? "#{st['retry_after_ms']}ms" : nil
    case st["outcome"]
    when "success" then permit.success(retry_after: ra)
    when "failure" then permit.failure(reason: (st["reason"] || "server_error").to_sym, retry_after: ra)
    when "healthy_error" then permit.healthy_error(retry_after: ra)
    when "rejected_request" then permit.rejected(retry_after: ra)
    when "cancelled" then permit.cancel
    else raise Mismatch, "unknown outcome #{st['outcome']}"
    end
  end

  def step(st)
    if st.key?("advance")
      @clock.advance(st["advance"])
    elsif st.key?("expect")
      info = @recs.fetch(st["expect"]).info
      st["info"].each do |key, want|
        got = at_path(info, key)
        raise Mismatch, "#{st['expect']}: #{key} is #{got.inspect}, want #{want.inspect}" if got.nil? || !matches(want, got)
      end
    elsif st.key?("call")
      br = @recs.fetch(st["call"])
      st.fetch("times", 1).times do
        p = answer(st, "acquire #{st['call']}") { br.acquire }
        release(st, p) if p
      end
    elsif st.key?("acquire")
      p = answer(st, "acquire #{st['acquire']}") { @recs.fetch(st["acquire"]).acquire }
      if p
        st.key?("as") ? @held[st["as"]] = p : p.cancel
      end
    elsif st.key?("release")
      counted = release(st, @held.fetch(st["release"]))
      if st.key?("counted") && counted != st["counted"]
        raise Mismatch, "release #{st['release']}: counted #{counted}, want #{st['counted']}"
      end
    elsif st.key?("op")
      br = @recs.fetch(st["breaker"])
      case st["op"]
      when "trip" then br.trip(st["for"])
      when "reset", "force_open", "disable", "metrics_only", "normal" then br.public_send(st["op"])
      else raise Mismatch, "unknown op #{st['op']}"
      end
    elsif st.key?("take")
      k = @recs.fetch(st["take"])
      answer(st, "take") { k.take(st.fetch("n", 1)) }
    elsif st.key?("pace_take")
      t = answer(st, "pace_take") { @recs.fetch(st["pace_take"]).take }
      @held[st["as"]] = t if t && st.key?("as")
    elsif st.key?("pace_report")
      headers = st.key?("retry_after") ? { "Retry-After" => st["retry_after"] } : nil
      cut = @held.fetch(st["pace_report"]).report(st["http"], headers)
      raise Mismatch, "pace_report: cut #{cut}, want #{st['cut']}" if st.key?("cut") && cut != st["cut"]
    elsif st.key?("deposit")
      st.fetch("times", 1).times { @recs.fetch(st["deposit"]).deposit }
    elsif st.key?("retry")
      g = @recs.fetch(st["retry"])
      st.fetch("times", 1).times { answer(st, "retry") { g.retry } }
    else
      raise Mismatch, "unknown step"
    end
  end
end

def run_scenario(sc, n)
  shm = "/brkconf-rb-#{Process.pid}-#{n}"
  clock = Breakerd::Testing::FakeClock.new
  seg = Breakerd.attach(shm: shm, capacity: 64, clock: clock)
  begin
    r = Run.new(seg, clock)
    sc.fetch("records", {}).each { |name, spec| r.record(name, spec) }
    sc["steps"].each_with_index do |st, i|
      r.step(st)
    rescue Mismatch, Breakerd::Error, ArgumentError, TypeError, KeyError => e
      raise Mismatch, "step #{i + 1} #{JSON.generate(st)}: #{e.message}"
    end
  ensure
    seg.close
    Breakerd.unlink(shm)
  end
end

passed = failed = skipped = n = 0
ARGV.each do |path|
  JSON.parse(File.read(path))["scenarios"].each do |sc|
    n += 1
    if (why = sc.fetch("unsupported", {})[LANG])
      puts "skip #{sc['name']}: #{why}"
      skipped += 1
      next
    end
    begin
      run_scenario(sc, n)
      puts "ok #{sc['name']}"
      passed += 1
    rescue Mismatch => e
      puts "not ok #{sc['name']}: #{e.message}"
      failed += 1
    end
  end
end
puts "conformance (#{LANG}): #{passed} passed, #{failed} failed, #{skipped} skipped"
exit(failed.zero? ? 0 : 1)
