# A Semian-shaped facade over breakerd: a Semian user changes a require
# ("semian" -> "breakerd/semian", "semian/net_http" ->
# "breakerd/semian/net_http"), not their code, and every worker of the host
# then shares one circuit (Semian's own circuit state is per process).
#
#   require "breakerd/semian"
#   Semian.register(:payments, bulkhead: true, tickets: 4, circuit_breaker: true,
#                   error_threshold: 3, error_timeout: 10, success_threshold: 1,
#                   exceptions: [Net::ReadTimeout])
#   Semian[:payments].acquire { call_payments }
#
# The segment is $BREAKERD_SHM, else /breakerd (Semian.segment= for tests).
# The breaker is named by the resource's name (Symbol or String). Options:
#   error_threshold   -> failure_threshold (consecutive failures; Semian
#                        counts errors within error_threshold_timeout)
#   error_timeout     -> open and max_open (a fixed cooling period), or
#                        with exponential_backoff_error_timeout: open =
#                        exponential_backoff_initial_timeout (default 1 s),
#                        max_open = error_timeout, doubling per failed probe
#   success_threshold -> success_threshold
#   tickets           -> max_concurrent (a host-wide bulkhead, as Semian's
#                        SysV semaphore; bulkhead: false -> none)
#   exceptions        -> the exceptions that are failures (plus
#                        Semian::BaseError); any other exception counts
#                        neither way, as in Semian; an error whose
#                        marks_semian_circuits? is false is not a failure
#   circuit_breaker: false -> a breaker that never opens (failure_threshold
#                        at its maximum, exceptions count neither way)
#   breakerd: {...}   -> any other breakerd setting (probe_timeout: "5s",
#                        half_open_probes:, max_wait:, failure_rate: ...),
#                        an extension Semian does not have
# Not mapped (accepted and ignored, with one warning per option):
# half_open_resource_timeout, lumping_interval, error_threshold_timeout,
# error_threshold_timeout_enabled, exponential_backoff_multiplier (always
# 2), timeout (breakerd never queues for a ticket), permissions,
# thread_safety_disabled, dynamic, adaptive_circuit_breaker,
# dual_circuit_breaker and its PID settings. Refused: quota (a share of
# the registered workers; breakerd's bulkhead has a fixed size: give
# tickets).
require "logger"
require "breakerd"

module Semian
  BaseError = Class.new(StandardError)
  SyscallError = Class.new(BaseError)
  TimeoutError = Class.new(BaseError)
  InternalError = Class.new(BaseError)
  OpenCircuitError = Class.new(BaseError)
  # The bulkhead had no ticket (Semian's adapters raise their own
  # ResourceBusyError; this one is Semian::TimeoutError too).
  ResourceBusyError = Class.new(TimeoutError)

  IGNORED_OPTIONS = %i[half_open_resource_timeout lumping_interval error_threshold_timeout
                       error_threshold_timeout_enabled exponential_backoff_multiplier timeout
                       permissions thread_safety_disabled dynamic adaptive_circuit_breaker
                       dual_circuit_breaker kp ki kd window_size initial_error_rate
                       dead_zone_ratio ideal_error_rate_estimator_cap_value integral_upper_cap
                       integral_lower_cap consumer open_circuit_server_errors].freeze
  KNOWN_OPTIONS = (%i[bulkhead tickets circuit_breaker error_threshold error_timeout
                      success_threshold exceptions exponential_backoff_error_timeout
                      exponential_backoff_initial_timeout quota name breakerd] + IGNORED_OPTIONS).freeze

  # Semian.subscribe / notify: :success, :busy, :circuit_open (this
  # process's calls; transitions of every process are in Breakerd's event
  # ring: Semian.segment.events).
  module Instrumentable
    def subscribe(name = rand, &block)
      subscribers[name] = block
      name
    end

    def unsubscribe(name)
      subscribers.delete(name)
    end

    def subscribers
      @subscribers ||= {}
    end

    def notify(*args)
      subscribers.values.each { |s| s.call(*args) }
    end
  end

  # A registered resource: a breakerd breaker (with its bulkhead).
  class ProtectedResource
    attr_reader :name, :breaker, :tickets

    def initialize(name, breaker, tickets:, failure:, circuit_breaker:)
      @name = name
      @breaker = breaker
      @tickets = tickets
      @failure = failure
      @circuit_breaker = circuit_breaker
    end

    # Run the block under a permit: a return is a success, an exception in
    # +exceptions+ a failure (re-raised), any other exception counts
    # neither way. A refusal raises OpenCircuitError (open, cooling, a
    # probe busy) or ResourceBusyError (no ticket).
    def acquire(timeout: nil, scope: nil, adapter: nil, resource: nil)
      permit = begin
        @breaker.acquire
      rescue Breakerd::BulkheadFull => e
        Semian.notify(:busy, self, scope, adapter)
        raise ResourceBusyError, "[#{@name}] #{e.message}"
      rescue Breakerd::Refused => e
        Semian.notify(:circuit_open, self, scope, adapter)
        raise OpenCircuitError, "[#{@name}] #{e.message}"
      end
      run(permit, scope, adapter) { yield self }
    end

    # The outcome of an exception under Semian's rules.
    def failure?(error)
      return false if error.respond_to?(:marks_semian_circuits?) && !error.marks_semian_circuits?

      @failure.any? { |c| error.is_a?(c) }
    end

    # Run the block under +permit+ and report it: an HTTP response (a
    # Net::HTTPResponse) by the library's table, a return otherwise as a
    # success, an exception by #failure?.
    def run(permit, scope = nil, adapter = nil)
      begin
        result = yield
      rescue Exception => e # rubocop:disable Lint/RescueException
        unless permit.released?
          if e.is_a?(Breakerd::Refused) || !e.is_a?(StandardError) then permit.cancel
          elsif failure?(e) && @circuit_breaker then permit.failure(reason: Breakerd::Classify::REASON_NAMES[Breakerd::Classify.reason_of(e)])
          else permit.rejected
          end
        end
        raise
      end
      permit.success unless permit.released?
      Semian.notify(:success, self, scope, adapter, 0)
      result
    end

    def open?
      state == :open
    end

    def closed?
      state == :closed
    end

    def half_open?
      state == :half_open
    end

    def request_allowed?
      info = @breaker.info
      info["mode"] != "forced_open" && info["open_remaining_ms"].zero? && info["cool_until_remaining_ms"].zero?
    end

    def reset(**)
      @breaker.reset
    end

    # Report a failure / success as if a call had just ended (takes a
    # permit for it: refused while open).
    def mark_failed(_error = nil, **)
      @breaker.acquire.failure
    rescue Breakerd::Refused
      nil
    end

    def mark_success(**)
      @breaker.acquire.success
    rescue Breakerd::Refused
      nil
    end

    # Permits out now, across the host (Semian's tickets in use).
    def count
      @breaker.info["in_flight"]
    end

    def in_use?
      count.positive?
    end

    def circuit_breaker
      self
    end

    def bulkhead
      @tickets ? self : nil
    end

    def destroy; end

    private

    def state
      @breaker.state
    end
  end

  extend Instrumentable

  @resources = {}
  @warned = {}
  @lock = Mutex.new

  class << self
    attr_writer :segment
    attr_accessor :logger

    # The breakerd segment: $BREAKERD_SHM, else /breakerd, attached once per
    # process (a fork()ed worker shares its parent's mapping).
    def segment
      @segment ||= Breakerd.attach
    end

    def register(name, **options)
      unknown = options.keys - KNOWN_OPTIONS
      raise ArgumentError, "unknown Semian option(s) #{unknown.join(', ')}" unless unknown.empty?
      raise ArgumentError, "quota: not supported by breakerd (its bulkhead has a fixed size): give tickets:" if options[:quota]

      (options.keys & IGNORED_OPTIONS).each { |o| warn_once(o) }
      bulkhead = options.fetch(:bulkhead, true)
      cb = options.fetch(:circuit_breaker, true)
      settings = {}
      if bulkhead
        raise ArgumentError, "tickets: required with bulkhead: true (or bulkhead: false)" unless options[:tickets]

        settings[:max_concurrent] = options[:tickets]
      end
      if cb
        %i[error_threshold error_timeout success_threshold].each do |o|
          raise ArgumentError, "#{o}: required with circuit_breaker: true" if options[o].nil?
        end
        settings[:failure_threshold] = options[:error_threshold]
        settings[:success_threshold] = options[:success_threshold]
        if options[:exponential_backoff_error_timeout]
          settings[:open] = options.fetch(:exponential_backoff_initial_timeout, 1)
        else
          settings[:open] = options[:error_timeout]
        end
        settings[:max_open] = options[:error_timeout]
      else
        settings[:failure_threshold] = Breakerd::LIMITS["failure_threshold"]
      end
      extra = options.fetch(:breakerd, {})
      raise TypeError, "breakerd: must be a Hash of breakerd settings" unless extra.is_a?(Hash)

      settings.merge!(extra.transform_keys(&:to_sym))
      failure = Array(options[:exceptions]) + [BaseError]
      br = segment.breaker(breaker_name(name), **settings)
      res = ProtectedResource.new(name, br, tickets: bulkhead ? options[:tickets] : nil,
                                            failure: failure, circuit_breaker: cb)
      @lock.synchronize { @resources[name] = res }
    end

    def retrieve_or_register(name, **options)
      self[name] || register(name, **options)
    end

    def [](name)
      @lock.synchronize { @resources[name] }
    end

    def resources
      @lock.synchronize { @resources.dup }
    end

    def unregister(name)
      @lock.synchronize { @resources.delete(name) }
    end

    def destroy(name)
      unregister(name)
    end

    def unregister_all_resources
      @lock.synchronize { @resources.clear }
    end
    alias destroy_all_resources unregister_all_resources

    def reset!
      unregister_all_resources
    end

    # The breakerd record name of a Semian resource name.
    def breaker_name(name)
      s = name.to_s
      raise ArgumentError, "name: #{name.inspect} is not a breaker name (A-Z a-z 0-9 . _ : / -)" unless s.match?(%r{\A[A-Za-z0-9._:/-]{1,63}\z})

      s
    end

    private

    def warn_once(option)
      return if @warned[option]

      @warned[option] = true
      (logger || Logger.new($stderr)).warn("breakerd/semian: Semian option #{option} is not mapped and is ignored")
    end
  end
end
