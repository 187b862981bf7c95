module Breakerd
  # The project's version (meson.build); tests/ruby checks they agree.
  VERSION = "0.1.0"
end
