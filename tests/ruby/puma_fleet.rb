# The Puma fleet test: Debian's puma in cluster mode (4 workers, threads
# 1,1, preload_app!) runs fleet_app.ru, whose every request calls a
# loopback upstream (fleet_upstream.py) through Net::HTTP and the Semian
# facade. Checks, on one shared breaker (threshold 3, open 1 s):
#   A. upstream down (500s): all workers together send it at most
#      threshold + (workers - 1) + probes;
#   B. while it stays down, one probe at a time reaches it;
#   C. recovery closes the breaker for every worker;
#   D. kill -9 of the worker holding the probe (upstream hangs) is
#      reclaimed: by the next refused caller without breakerd, by
#      breakerd's scan with it;
#   E. a 429 with Retry-After seen by one worker cools every worker, and a
#      Python process on the same segment (the breaker has implicit_pace
#      off, fleet_app.ru: by default its implicit pace would take the 429).
# Loopback only; starts and stops its servers; bounded time (each wait has
# a deadline). Run by tests/ruby/puma_fleet.sh.
require "breakerd"
require "json"
require "net/http"
require "socket"
require "tmpdir"

WORKERS = 4
THRESHOLD = 3
SRC = ENV.fetch("BRKRB_SRCDIR")
BUILD = ENV.fetch("BRKRB_BUILDDIR")
PYTHON = ENV["BRKRB_PYTHON"]
SHM = "/brkrb-puma-#{Process.pid}"
ENV["BREAKERD_SHM"] = SHM
$failures = 0
$children = []

def check(ok, what)
  puts "#{ok ? 'ok' : 'not ok'} - #{what}"
  $failures += 1 unless ok
  ok
end

def wait_until(seconds, what)
  deadline = Time.now + seconds
  until (v = yield)
    raise "timed out after #{seconds} s waiting for #{what}" if Time.now > deadline

    sleep 0.05
  end
  v
end

def get(port, path, timeout: 10)
  http = Net::HTTP.new("127.0.0.1", port)
  http.open_timeout = timeout
  http.read_timeout = timeout
  res = http.request(Net::HTTP::Get.new(path))
  [res.code.to_i, res.body]
rescue StandardError => e
  [0, "client #{e.class}"]
end

def free_port
  s = TCPServer.new("127.0.0.1", 0)
  s.addr[1].tap { s.close }
end

def children_of(pid)
  Dir["/proc/[0-9]*/stat"].filter_map do |f|
    fields = File.read(f).split(") ").last.split
    File.basename(File.dirname(f)).to_i if fields[1].to_i == pid
  rescue Errno::ENOENT, Errno::ESRCH
    nil
  end
end

# +clients+ threads call /call until +seconds+ pass; returns the bodies.
def load(port, seconds, clients: 8)
  out = Queue.new
  deadline = Time.now + seconds
  Array.new(clients) do
    Thread.new { out << get(port, "/call")[1] while Time.now < deadline }
  end.each(&:join)
  Array.new(out.size) { out.pop }
end

class Upstream
  attr_reader :port

  def initialize
    @io = IO.popen(["/usr/bin/python3", File.join(__dir__, "fleet_upstream.py")], "r+")
    $children << @io.pid
    @port = Integer(@io.gets)
  end

  def mode(m, ra: 1)
    get(@port, "/mode?m=#{m}&ra=#{ra}")
  end

  def stats
    JSON.parse(get(@port, "/stats")[1])
  end

  def reset
    get(@port, "/reset")
  end

  def stop
    @io.close
  end
end

def start_puma(dir, uport)
  port = free_port
  cfg = File.join(dir, "puma.rb")
  File.write(cfg, <<~CFG)
    workers #{WORKERS}
    threads 1, 1
    preload_app!
    bind "tcp://127.0.0.1:#{port}"
    worker_timeout 120
    worker_shutdown_timeout 2
    environment "production"
  CFG
  log = File.join(dir, "puma.log")
  pid = spawn({ "BRKRB_UPSTREAM_PORT" => uport.to_s, "BREAKERD_SHM" => SHM },
              "puma", "-C", cfg, File.join(__dir__, "fleet_app.ru"),
              out: log, err: log, pgroup: true)
  $children << pid
  begin
    wait_until(60, "puma's #{WORKERS} workers") { children_of(pid).size == WORKERS && get(port, "/pid")[0] == 200 }
  rescue RuntimeError
    puts File.read(log)
    raise
  end
  [pid, port, log]
end

def breaker_info(seg)
  seg.breaker("nethttp_up").info
end

def trip_open(up, port, seg)
  up.mode("down")
  wait_until(20, "the breaker to open") do
    get(port, "/call")
    breaker_info(seg)["state"] == "open"
  end
end

dir = Dir.mktmpdir("brkrb-puma")
daemon = nil
begin
  up = Upstream.new
  puma, port, log = start_puma(dir, up.port)
  seg = Breakerd.attach(shm: SHM)
  _, body = get(port, "/pid")
  check(body.split[1].to_i == puma, "the segment was attached in Puma's master, before the fork (preload_app!)")
  workers = children_of(puma)
  up.mode("ok")
  check(load(port, 1).all? { |b| b.end_with?("upstream 200\n") }, "healthy upstream: every call goes through")

  # A. upstream down: at most threshold + (workers - 1) + probes reach it
  up.mode("down")
  up.reset
  probes0 = breaker_info(seg)["counters"]["probes"]
  bodies = load(port, 3)
  hits = up.stats["hits"]
  info = breaker_info(seg)
  probes = info["counters"]["probes"] - probes0
  bound = THRESHOLD + (WORKERS - 1) + probes
  puts "# down: #{bodies.size} calls, #{hits} reached the upstream, #{probes} probe admissions, bound #{bound}"
  check(hits <= bound, "upstream down: #{hits} calls reached it, at most threshold + (workers - 1) + probes = #{bound}")
  check(hits >= THRESHOLD, "upstream down: the threshold's #{THRESHOLD} failures reached it (#{hits})")
  check(bodies.count { |b| b.include?(" refused ") } > bodies.size / 2, "upstream down: most calls were refused without calling it")
  refusing = bodies.select { |b| b.include?(" refused ") }.map { |b| b.split[0].to_i }.uniq
  check(refusing.sort == workers.sort, "upstream down: every worker refused calls (#{refusing.size} of #{WORKERS})")

  # B. one probe at a time while it stays down
  up.reset
  load(port, 2.5)
  st = up.stats
  check(st["max_in_flight"] == 1 && st["hits"] >= 1,
        "half-open: one probe at a time reached the upstream (max #{st['max_in_flight']} at once, #{st['hits']} probes)")

  # C. recovery closes it for every worker
  up.mode("ok")
  wait_until(10, "the breaker to close") { get(port, "/call"); breaker_info(seg)["state"] == "closed" }
  bodies = load(port, 1.5)
  served = bodies.select { |b| b.end_with?("upstream 200\n") }.map { |b| b.split[0].to_i }.uniq
  check(bodies.all? { |b| b.end_with?("upstream 200\n") } && served.sort == workers.sort,
        "recovered: every worker's calls go through (#{served.size} workers, #{bodies.size} calls)")

  # D. kill -9 of the worker holding the probe, without and with breakerd
  [false, true].each do |with_daemon|
    label = with_daemon ? "with breakerd" : "without breakerd"
    if with_daemon
      dlog = File.join(dir, "breakerd.log")
      daemon = spawn(File.join(BUILD, "daemon", "breakerd"), "--shm", SHM, "--interval", "100ms",
                     out: dlog, err: dlog)
      $children << daemon
    end
    trip_open(up, port, seg)
    up.mode("hang")
    sleep 1.1 # the cooling period ends
    holder_call = Thread.new { get(port, "/call", timeout: 90) }
    lease = wait_until(10, "a probe lease") do
      breaker_info(seg)["leases"].find { |l| l["kind"] == "probe" }
    end
    reclaimed0 = breaker_info(seg)["counters"]["reclaimed"]
    Process.kill(:KILL, lease["pid"])
    if with_daemon
      # nobody calls: only breakerd's scan can free the dead probe
      ok = begin
        wait_until(5, "breakerd to reclaim") { breaker_info(seg)["counters"]["reclaimed"] > reclaimed0 }
      rescue RuntimeError
        false
      end
      check(ok, "#{label}: the dead probe holder's lease was reclaimed by breakerd's scan, no caller needed")
      up.mode("ok")
    else
      up.mode("ok")
      wait_until(10, "a refused caller to reclaim") { get(port, "/call"); breaker_info(seg)["counters"]["reclaimed"] > reclaimed0 }
      check(true, "#{label}: the dead probe holder's lease was reclaimed by the next refused caller")
    end
    holder_call.join
    wait_until(20, "the breaker to close after the reclaim") { get(port, "/call"); breaker_info(seg)["state"] == "closed" }
    wait_until(60, "Puma to replace the killed worker") { children_of(puma).size == WORKERS && !children_of(puma).include?(lease["pid"]) }
    workers = children_of(puma)
    bodies = load(port, 1)
    check(bodies.all? { |b| b.end_with?("upstream 200\n") }, "#{label}: after the reclaim the breaker closed and every call goes through")
  end

  # E. a 429 with Retry-After seen by one worker cools every worker and Python;
  # every cooling period is capped at max_open (1 s here, error_timeout):
  # raised so the 4 s Retry-After is kept whole
  seg.breaker("nethttp_up").configure(max_open: "10s")
  up.mode("429", ra: 4)
  up.reset
  first = get(port, "/call")[1]
  check(first.end_with?("upstream 429\n"), "429: one worker got it (#{first.strip})")
  bodies = load(port, 1.5)
  cooled = bodies.select { |b| b.include?(" refused cooling") }.map { |b| b.split[0].to_i }.uniq
  check(up.stats["hits"] == 1, "429: the upstream was called once (#{up.stats['hits']}) while the Retry-After runs")
  check(cooled.sort == workers.sort, "429: every worker refuses with 'cooling' (#{cooled.size} of #{WORKERS})")
  if PYTHON
    py = <<~PY
      import breakerd, sys
      br = breakerd.attach(sys.argv[1]).breaker("nethttp_up")
      try:
          br.acquire().cancel()
          print("admitted")
      except breakerd.Cooling as e:
          print("cooling %.1f" % e.wait)
    PY
    out = IO.popen([PYTHON, "-c", py, SHM], &:read).to_s.strip
    check(out.start_with?("cooling"), "429: a Python process on the same segment is cooled too (#{out})")
  else
    puts "# skip: no Python with the breakerd package (tests/python/run.sh skipped)"
  end
  check(breaker_info(seg)["state"] == "closed", "429: cooling, not opening (the breaker stays closed)")
rescue RuntimeError => e
  check(false, e.message)
  puts File.read(log) if log && File.exist?(log)
ensure
  $children.reverse_each do |pid|
    Process.kill(:TERM, pid) if pid == daemon || pid == puma
  rescue Errno::ESRCH
    nil
  end
  up&.stop
  $children.each do |pid|
    Timeout.timeout(15) { Process.wait(pid) }
  rescue Errno::ECHILD
    nil
  rescue Timeout::Error
    Process.kill(:KILL, -pid) rescue nil # rubocop:disable Style/RescueModifier
    Process.kill(:KILL, pid) rescue nil # rubocop:disable Style/RescueModifier
  end
  Breakerd.unlink(SHM)
  FileUtils.rm_rf(dir)
end
puts "puma fleet: #{$failures.zero? ? 'PASS' : "FAIL (#{$failures})"}"
exit($failures.zero? ? 0 : 1)
