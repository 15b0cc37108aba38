# frozen_string_literal: true

# Stripebench's gem planner (run by stripebench_tui/runtime/ruby_gems.py; prints one JSON object).
#
#   ruby gem_plan.rb GEMFILE LOCKFILE|- BUILT_DIR
#
# Walks what GEMFILE asks for, and what that asks for in turn, and says for each requirement where it is met:
# an installed gem (Debian's, Ruby's default gems, or one already in the episode's GEM_HOME), a gem already built
# into BUILT_DIR, or nothing yet: then the version to build, the one LOCKFILE names when it fits the requirement,
# else the version the requirement pins exactly. A gem to build brings the dependencies LOCKFILE lists for it.
require "bundler"
require "json"
require "rubygems/package"

gemfile, lockfile, built_dir = ARGV
ENV["BUNDLE_GEMFILE"] = File.expand_path(gemfile) # Bundler reads its root from it
lock_specs = if lockfile && lockfile != "-" && File.file?(lockfile)
               Bundler::LockfileParser.new(File.read(lockfile)).specs
             else
               []
             end
built = Dir.glob(File.join(built_dir.to_s, "*.gem")).filter_map do |path|
  Gem::Package.new(path).spec
rescue StandardError
  nil
end

definition = Bundler::Dsl.evaluate(Pathname.new(File.expand_path(gemfile)), nil, {})
queue = definition.dependencies.map { |dep| [dep.name, dep.requirement, "Gemfile"] }
seen = {}
chosen = {} # name => the version a row already settled on (a later requirement it fits adds nothing)
rows = []
until queue.empty?
  name, requirement, via = queue.shift
  key = "#{name} #{requirement}"
  next if seen[key]

  seen[key] = true
  next if chosen[name] && requirement.satisfied_by?(chosen[name])

  row = { "name" => name, "requirement" => requirement.to_s, "via" => via }
  installed = Gem::Specification.find_all_by_name(name, requirement).max_by(&:version)
  if installed
    row["have"] = installed.version.to_s
    row["from"] = installed.default_gem? ? "default" : installed.base_dir
    deps = installed.runtime_dependencies.map { |d| [d.name, d.requirement] }
  elsif (made = built.select { |s| s.name == name && requirement.satisfied_by?(s.version) }.max_by(&:version))
    row["built"] = made.version.to_s
    deps = made.runtime_dependencies.map { |d| [d.name, d.requirement] }
  else
    locked = lock_specs.find { |s| s.name == name && requirement.satisfied_by?(s.version) }
    pinned = requirement.exact? ? requirement.requirements.first.last : nil
    if locked
      row["build"] = locked.version.to_s
      row["why"] = "Gemfile.lock"
      deps = locked.dependencies.map { |d| [d.name, d.requirement] }
    elsif pinned
      row["build"] = pinned.to_s
      row["why"] = "pinned"
      deps = []
    else
      row["why"] = "no installed gem fits and no version to build: neither Gemfile.lock nor the requirement names one"
      deps = []
    end
    others = Gem::Specification.find_all_by_name(name).map { |s| s.version.to_s }
    row["installed"] = others unless others.empty?
  end
  version = row["have"] || row["built"] || row["build"]
  chosen[name] = Gem::Version.new(version) if version
  rows << row
  deps.each { |dep_name, dep_req| queue << [dep_name, dep_req, name] }
end
puts JSON.generate({ "ruby" => RUBY_VERSION, "bundler" => Bundler::VERSION, "gems" => rows })
