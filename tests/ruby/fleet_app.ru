# The Rack app of the Puma fleet test: each /call is one Net::HTTP call to
# the loopback upstream through the Semian facade (breakerd/semian/net_http).
# Loaded once in Puma's master (preload_app!): the segment and the resource
# are attached there, before the workers are forked. implicit_pace off:
# part E tests the shared Retry-After cooling (the default implicit pace
# would take the 429 instead: test_semian.rb, the conformance scenarios).
require "breakerd/semian/net_http"

UPSTREAM_PORT = Integer(ENV.fetch("BRKRB_UPSTREAM_PORT"))
OPTIONS = { name: "up", bulkhead: false, error_threshold: 3, error_timeout: 1,
            success_threshold: 1, breakerd: { probe_timeout: "30s", implicit_pace: false } }.freeze
Semian::NetHTTP.semian_configuration = proc do |host, port|
  OPTIONS if host == "127.0.0.1" && port == UPSTREAM_PORT
end
Semian.retrieve_or_register("nethttp_up", **OPTIONS.reject { |k, _| k == :name })
ATTACHED_IN = Process.pid

run(proc do |env|
  case env["PATH_INFO"]
  when "/call"
    begin
      http = Net::HTTP.new("127.0.0.1", UPSTREAM_PORT)
      http.read_timeout = 90
      res = http.request(Net::HTTP::Get.new("/work"))
      [200, {}, ["#{Process.pid} upstream #{res.code}\n"]]
    rescue Net::CircuitOpenError => e
      [503, {}, ["#{Process.pid} refused #{e.message[/\((\w+)\)/, 1]}\n"]]
    rescue StandardError => e
      [502, {}, ["#{Process.pid} error #{e.class}\n"]]
    end
  when "/pid"
    [200, {}, ["#{Process.pid} #{ATTACHED_IN}\n"]]
  else
    [404, {}, ["no such path\n"]]
  end
end)
