# frozen_string_literal: true

# Stripebench's Ruby preload (RUBYOPT=-r<this file>): the stripe gem of an unmodified app talks to
# $STRIPE_API_BASE. Requiring the gem here would break every ruby the episode runs where it is not installed (or
# not yet on the load path before Bundler sets it up), so this waits for the gem to define itself: a TracePoint on
# the end of module and class bodies sees `module Stripe` once it can take `Stripe.api_base=`, and
# `Stripe::StripeClient` (stripe-ruby 13+) once it exists. The gem is loaded however the app loads it (require,
# Bundler.require, autoload). What the app sets itself afterwards (`Stripe.api_base = …`, `api_base:` on a client)
# wins. With STRIPE_API_BASE empty (real Stripe test mode) nothing is installed.
# Code that calls the API with Net::HTTP itself (subscription-gym's challenges.rb builds its own requests to
# https://api.stripe.com) is pointed at the same base: a Net::HTTP made for the host api.stripe.com connects to the
# base's host and port instead, with TLS only when the base is https. With STRIPEBENCH_REQUEST_SOURCE set (a
# grader's process), every request to the base says who sent it (X-Stripebench-Source).
module StripebenchStripePreload
  STRIPE_HOST = "api.stripe.com"
  SOURCE_HEADER = "X-Stripebench-Source" # stripebench_tui.core.events.SOURCE_HEADER

  # Net::HTTP.new("api.stripe.com", 443) → the base's address; use_ssl follows the base's scheme.
  module NetHTTPRedirect
    def initialize(address, port = nil, *rest)
      target = StripebenchStripePreload.base_uri
      if target && address.to_s == STRIPE_HOST
        @stripebench_plain = target.scheme == "http"
        super(target.host, target.port, *rest)
      else
        super
      end
    end

    def use_ssl=(flag)
      super(@stripebench_plain ? false : flag)
    end

    # A grader's process says so (STRIPEBENCH_REQUEST_SOURCE=grader): its requests to the base carry the header
    # the episode's request log reads, so its own setup (three subscriptions alike…) is not taken for the app's.
    def request(req, *rest, &block)
      source = StripebenchStripePreload.source
      target = StripebenchStripePreload.base_uri
      if source && target && address == target.host && port == target.port && !req.key?(SOURCE_HEADER)
        req[SOURCE_HEADER] = source
      end
      super
    end
  end

  # Default api_base: for clients built without one.
  module ClientDefaults
    def initialize(*args, **kwargs, &block)
      kwargs = { api_base: StripebenchStripePreload.base }.merge(kwargs)
      super(*args, **kwargs, &block)
    end
  end

  class << self
    attr_reader :base, :base_uri, :source

    def install(base)
      @base = base
      @source = ENV.fetch("STRIPEBENCH_REQUEST_SOURCE", "").strip
      @source = nil if @source.empty?
      require "uri"
      @base_uri = URI(base)
      @pending = %w[Stripe Stripe::StripeClient Net::HTTP]
      # What is loaded already (`ruby -rstripe …` requires the gem before RUBYOPT's -r) is configured now
      @pending.dup.each { |name| (mod = defined_module(name)) && seen(mod) }
      return if @pending.empty?

      @trace = TracePoint.new(:end) { |tp| seen(tp.self) }
      @trace.enable
    end

    private

    def seen(mod)
      name = mod.is_a?(Module) ? mod.name : nil
      return unless name && @pending.include?(name)

      @pending.delete(name) if configure(mod, name)
      @trace.disable if @trace && @pending.empty?
    end

    def defined_module(name)
      name.split("::").inject(Object) { |scope, part| scope.const_defined?(part, false) ? scope.const_get(part, false) : (return nil) }
    end

    def configure(mod, name)
      if name == "Net::HTTP"
        mod.prepend(NetHTTPRedirect) unless mod.ancestors.include?(NetHTTPRedirect)
        return true
      end
      if name == "Stripe"
        return false unless mod.respond_to?(:api_base=)

        mod.api_base = base
      else
        keywords = mod.instance_method(:initialize).parameters.map(&:last)
        return true unless keywords.include?(:api_base) # an older StripeClient (a connection wrapper)

        mod.prepend(ClientDefaults)
      end
      true
    rescue StandardError # the gem's configuration is not set up yet: try again at its next `end`
      false
    end
  end
end

stripebench_stripe_base = ENV.fetch("STRIPE_API_BASE", "").strip.chomp("/")
StripebenchStripePreload.install(stripebench_stripe_base) unless stripebench_stripe_base.empty?
