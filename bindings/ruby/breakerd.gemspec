# The breakerd gem: a C extension over libbreaker.so.0 (found with
# pkg-config: install libbreaker first, `ninja -C build install && ldconfig`)
# and its thin Ruby layer. Built and installed offline:
#   gem build breakerd.gemspec && gem install --local ./breakerd-*.gem
require_relative "lib/breakerd/version"

Gem::Specification.new do |s|
  s.name = "breakerd"
  s.version = Breakerd::VERSION
  s.summary = "Host-wide circuit breakers shared by every worker on one host (libbreaker)"
  s.description = "Circuit breakers, bulkheads, GCRA rate limits and retry budgets in a " \
                  "POSIX shared-memory segment, shared by every process on one host: Puma " \
                  "and Unicorn workers, Python, C and bctl. Includes a Semian-shaped facade."
  s.authors = ["breakerd"]
  s.license = "MIT"
  s.required_ruby_version = ">= 3.0"
  s.files = Dir["lib/**/*.rb"] + Dir["ext/breakerd/*.{c,h,rb}"] + ["breakerd.gemspec"]
  s.extensions = ["ext/breakerd/extconf.rb"]
  s.require_paths = ["lib"]
end
