dnl config.m4 - the breakerd PHP extension (phpize), built against the
dnl libbreaker that pkg-config finds: an installed one, or a build tree's
dnl meson-uninstalled/breaker-uninstalled.pc through PKG_CONFIG_PATH.
PHP_ARG_ENABLE([breakerd],
  [whether to enable breakerd (host-wide circuit breakers over libbreaker)],
  [AS_HELP_STRING([--enable-breakerd], [Enable the breakerd extension])],
  [yes])

if test "$PHP_BREAKERD" != "no"; then
  PKG_CHECK_MODULES([BREAKER], [breaker], [],
    [AC_MSG_ERROR([breakerd: pkg-config cannot find 'breaker' (libbreaker): run 'ninja -C build install && ldconfig' first, or set PKG_CONFIG_PATH])])
  PHP_EVAL_INCLINE($BREAKER_CFLAGS)
  PHP_EVAL_LIBLINE($BREAKER_LIBS, BREAKERD_SHARED_LIBADD)
  PHP_SUBST(BREAKERD_SHARED_LIBADD)
  BREAKERD_CFLAGS="-std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers"
  if test "$BREAKERD_WERROR" = "1"; then
    BREAKERD_CFLAGS="$BREAKERD_CFLAGS -Werror"
  fi
  PHP_NEW_EXTENSION(breakerd,
    src/bphp_module.c src/bphp_util.c src/bphp_segment.c src/bphp_breaker.c src/bphp_permit.c src/bphp_settings.c src/bphp_limits.c src/bphp_info.c src/bphp_clock.c,
    $ext_shared,, $BREAKERD_CFLAGS)
  PHP_ADD_BUILD_DIR($ext_builddir/src)
  PHP_ADD_MAKEFILE_FRAGMENT
fi
