<?php
// PHPUnit bootstrap for tests/php: the extension is loaded by run.sh
// (php -d extension=BUILDDIR/php-ext/modules/breakerd.so); the PHP layer
// (the Guzzle middleware, the ganesha facade) from bindings/php/lib.
declare(strict_types=1);

if (!extension_loaded('breakerd')) {
    fwrite(STDERR, "the breakerd extension is not loaded (run through tests/php/run.sh)\n");
    exit(1);
}
require_once getenv('BRKPHP_SRCDIR') . '/bindings/php/lib/Breakerd/autoload.php';

/** A private segment name for one test. */
function brk_test_shm(string $tag): string
{
    static $n = 0;
    return sprintf('/brkphp-%s-%d-%d', $tag, getmypid(), ++$n);
}
