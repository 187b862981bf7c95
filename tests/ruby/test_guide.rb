require_relative "helper"
require "open3"

# Every ```ruby block of docs/guide/ruby.md runs, alone, on a private
# segment ($BREAKERD_SHM), and exits 0.
class TestGuide < Minitest::Test
  GUIDE = File.join(ENV.fetch("BRKRB_SRCDIR", File.expand_path("../..", __dir__)), "docs/guide/ruby.md")

  def test_every_ruby_example_runs
    blocks = File.read(GUIDE).scan(/^```ruby\n(.*?)^```/m).map(&:first)
    assert_operator blocks.size, :>=, 5
    blocks.each_with_index do |code, i|
      shm = "/brkrb-guide-#{Process.pid}-#{i}"
      out, status = Open3.capture2e({ "BREAKERD_SHM" => shm }, "/usr/bin/ruby", "-e", code)
      Breakerd.unlink(shm)
      assert status.success?, "example #{i + 1} of #{GUIDE} failed:\n#{code}\n--- output:\n#{out}"
    end
  end
end
