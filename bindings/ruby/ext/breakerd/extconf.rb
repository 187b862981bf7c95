# extconf.rb - the breakerd extension, built against the libbreaker that
# pkg-config finds (an installed one, or a build tree's
# meson-uninstalled/breaker-uninstalled.pc through PKG_CONFIG_PATH).
require "mkmf"

unless pkg_config("breaker")
  abort "breakerd: pkg-config cannot find 'breaker' (libbreaker): run " \
        "'ninja -C build install && ldconfig' first, or set PKG_CONFIG_PATH"
end
abort "breakerd: breaker.h not found" unless have_header("breaker.h")
abort "breakerd: brk_acquire not found in libbreaker" unless have_func("brk_acquire", "breaker.h")

$CFLAGS << " -std=gnu11 -Wall -Wextra -Wno-unused-parameter"
$CFLAGS << " -Werror" if ENV["BREAKERD_WERROR"] == "1"
create_makefile("breakerd/breakerd_ext")
