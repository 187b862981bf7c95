# Runs every tests/ruby/test_*.rb (minitest autorun at exit).
Dir[File.join(__dir__, "test_*.rb")].sort.each { |f| require f }
