# Net::HTTP through the Semian facade, in Semian's style (semian/net_http):
#
#   require "breakerd/semian/net_http"
#   Semian::NetHTTP.semian_configuration = proc do |host, port|
#     { name: "api", tickets: 4, error_threshold: 3, error_timeout: 10,
#       success_threshold: 1 } if host == "api.internal"
#   end
#
# Every Net::HTTP#request to a configured host runs under a permit of the
# resource "nethttp_<name>". Unlike Semian, whose circuit sees only
# exceptions (and 5xx with open_circuit_server_errors), every response is
# classified by the library's HTTP table (Permit#report_http): 5xx and
# timeouts are failures, a 429 or 503 with Retry-After cools every worker
# of the host for that long, 404 is a healthy answer, other 4xx count
# neither way. A refusal raises Net::CircuitOpenError or
# Net::ResourceBusyError, as Semian's adapter does.
require "net/http"
require "breakerd/semian"

module Net
  class SemianError < ::Net::ProtocolError
    attr_reader :semian_identifier

    def initialize(semian_identifier, *args)
      super(*args)
      @semian_identifier = semian_identifier
    end
  end

  ResourceBusyError = Class.new(SemianError)
  CircuitOpenError = Class.new(SemianError)
end

module Semian
  module NetHTTP
    ResourceBusyError = ::Net::ResourceBusyError
    CircuitOpenError = ::Net::CircuitOpenError

    class SemianConfigurationChangedError < RuntimeError
      def initialize(msg = "Cannot re-initialize semian_configuration")
        super
      end
    end

    DEFAULT_ERRORS = [
      ::Timeout::Error, ::SocketError, ::Net::HTTPBadResponse, ::Net::HTTPHeaderSyntaxError,
      ::Net::ProtocolError, ::EOFError, ::IOError, ::SystemCallError
    ].freeze

    module ClassMethods
      def new(*args, semian: true)
        http = super(*args)
        http.instance_variable_set(:@semian_enabled, semian)
        http
      end
    end

    class << self
      attr_accessor :exceptions
      attr_reader :semian_configuration

      def semian_configuration=(configuration)
        raise SemianConfigurationChangedError unless @semian_configuration.nil?

        @semian_configuration = configuration
      end

      # Tests only: forget the configuration.
      def reset_semian_configuration!
        @semian_configuration = nil
      end

      def retrieve_semian_configuration(host, port)
        @semian_configuration.call(host, port) if @semian_configuration.respond_to?(:call)
      end

      def reset_exceptions
        self.exceptions = DEFAULT_ERRORS.dup
      end
    end
    reset_exceptions

    def semian_identifier
      "nethttp_#{raw_semian_options[:name]}"
    end

    def raw_semian_options
      @raw_semian_options ||= Semian::NetHTTP.retrieve_semian_configuration(address, port)&.dup
    end

    def disabled?
      raw_semian_options.nil? || @semian_enabled == false
    end

    def semian_resource
      @semian_resource ||= begin
        opts = raw_semian_options.transform_keys(&:to_sym)
        opts.delete(:name)
        opts[:exceptions] = Array(opts[:exceptions]) + Semian::NetHTTP.exceptions
        Semian.retrieve_or_register(semian_identifier, **opts)
      end
    end

    # Connecting (Net::HTTP#start, before any request) runs under a permit
    # too: a connection that fails is a failure; one that succeeds is no
    # verdict (the permit is released cancelled): the requests judge.
    def connect
      return super if disabled? || @semian_in_request

      permit = semian_acquire(:connection)
      semian_resource.run(permit, :connection, :http) do
        r = super
        permit.cancel
        r
      end
    end

    # A request is one call of the breaker (an outer request only:
    # Net::HTTP#request calls itself inside start), its response
    # classified by the library's table.
    def request(req, body = nil, &block)
      return super if disabled? || @semian_in_request

      permit = semian_acquire(:query)
      begin
        @semian_in_request = true
        semian_resource.run(permit, :query, :http) do
          res = super
          semian_report(permit, res)
          res
        end
      ensure
        @semian_in_request = false
      end
    end

    private

    def semian_acquire(scope)
      semian_resource.breaker.acquire
    rescue Breakerd::BulkheadFull => e
      Semian.notify(:busy, semian_resource, scope, :http)
      raise ::Net::ResourceBusyError.new(semian_identifier, e.message)
    rescue Breakerd::Refused => e
      Semian.notify(:circuit_open, semian_resource, scope, :http)
      raise ::Net::CircuitOpenError.new(semian_identifier, e.message)
    end

    # The verdict of a response: the library's HTTP table.
    def semian_report(permit, res)
      permit.report_http(res.code.to_i, res)
    end
  end
end

Net::HTTP.prepend(Semian::NetHTTP)
Net::HTTP.singleton_class.prepend(Semian::NetHTTP::ClassMethods)
