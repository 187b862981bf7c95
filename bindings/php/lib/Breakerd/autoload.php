<?php
// The PHP layer of the breakerd extension (bindings/php/lib/Breakerd,
// installed as /usr/share/php/Breakerd by `make install`): the Guzzle
// middleware and the ganesha-shaped facade. PSR-4 under Breakerd\, from
// this folder. The classes of the core (Segment, Breaker, Permit...) are
// the extension's.
spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'Breakerd\\', 9) !== 0) {
        return;
    }
    $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, 9)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
